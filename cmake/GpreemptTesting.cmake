include(GoogleTest)

# Environment for tests registered with plain add_test (pytest, scripts): where the fixtures are
# and where the build put its programs (bin/, lib/ under the build directory).
function(gpreempt_test_environment out)
  set(${out} "GPREEMPT_SHARED_DIR=${GPREEMPT_SHARED_DIR}"
             "GPREEMPT_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
             "GPREEMPT_BINARY_DIR=${PROJECT_BINARY_DIR}"
             "GPREEMPT_SANITIZER_PRELOAD=${GPREEMPT_SANITIZER_PRELOAD}" PARENT_SCOPE)
endfunction()

# Environment for pytest entries that import the gpreempt module straight into /usr/bin/python3
# (not through kfdsim run, which does this itself): in a sanitizer build the module is
# instrumented and the interpreter is not, so the sanitizer runtime must be preloaded (ASan refuses
# to start otherwise), and LeakSanitizer then checks the interpreter as well, whose exit-time
# allocations and its libraries' are suppressed (tests/python/lsan-python.supp, each with its reason).
function(gpreempt_python_test_environment out)
  gpreempt_test_environment(e)
  if(GPREEMPT_SANITIZER_PRELOAD)
    # libstdc++ right after the runtime: python3 does not link it, so when ASan starts there is no
    # __cxa_throw for its interceptor to find, and the module's first C++ throw aborts ("CHECK
    # failed: real___cxa_throw != 0"). Under kfdsim run the shim brings libstdc++ in the same way.
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so.6
                    OUTPUT_VARIABLE libstdcxx OUTPUT_STRIP_TRAILING_WHITESPACE)
    list(APPEND e "LD_PRELOAD=${GPREEMPT_SANITIZER_PRELOAD}:${libstdcxx}")
  endif()
  if(GPREEMPT_SANITIZE MATCHES "address")
    # intercept_tls_get_addr=0: GCC 12's LeakSanitizer misreads the dynamic TLS of Python's
    # extension modules and crashes at exit ("Tracer caught signal 11"); scripts/sanitize.sh says why.
    list(APPEND e "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/python/lsan-python.supp:intercept_tls_get_addr=0")
  endif()
  set(${out} "${e}" PARENT_SCOPE)
endfunction()

# A test's time limit: sanitizer builds run several times slower (ASan's 50 MB decoder tests take
# minutes on a loaded 2-core machine; a PyTorch model or a gpreemptd scenario under ASan takes 3 to
# 10 times as long as without), so every entry gets five times as long there. CI runs the ASan
# suite on every change, on a machine that may be slower than the one the limits were set on.
if(GPREEMPT_SANITIZE STREQUAL "")
  set(GPREEMPT_TEST_TIMEOUT_SCALE 1)
else()
  set(GPREEMPT_TEST_TIMEOUT_SCALE 5)
endif()

# gpreempt_test_timeout(OUT seconds): the TIMEOUT of an entry that needs `seconds` in a normal build.
function(gpreempt_test_timeout out seconds)
  math(EXPR t "${seconds} * ${GPREEMPT_TEST_TIMEOUT_SCALE}")
  set(${out} ${t} PARENT_SCOPE)
endfunction()
gpreempt_test_timeout(GPREEMPT_GTEST_TIMEOUT 120)

# gpreempt_add_gtest(NAME SOURCES a.cpp b.cpp LIBS x y [DEPENDS targets...])
# One GoogleTest executable; each TEST becomes its own ctest entry. GTEST_SKIP shows as skipped.
# Where the fixtures and the build's programs are is compiled in (tests/support/fixtures.h reads
# GPREEMPT_TEST_*), and the environment variables of the same names without _TEST override it.
# (gtest_discover_tests passes PROPERTIES as name/value pairs, so a multi-variable ENVIRONMENT
# list would be cut after its first element: only GPREEMPT_BINARY_DIR travels that way.)
function(gpreempt_add_gtest name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;DEPENDS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main gpreempt_warnings)
  target_compile_definitions(${name} PRIVATE
    GPREEMPT_TEST_SHARED_DIR="${GPREEMPT_SHARED_DIR}"
    GPREEMPT_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    GPREEMPT_TEST_BINARY_DIR="${PROJECT_BINARY_DIR}")
  if(T_DEPENDS)
    add_dependencies(${name} ${T_DEPENDS})
  endif()
  gtest_discover_tests(${name}
    DISCOVERY_MODE PRE_TEST
    PROPERTIES ENVIRONMENT "GPREEMPT_BINARY_DIR=${PROJECT_BINARY_DIR}"
               SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]" TIMEOUT ${GPREEMPT_GTEST_TIMEOUT})
endfunction()

# gpreempt_add_pytests(PREFIX name [RUNNER cmd...] [ENVIRONMENT VAR=value...] [TIMEOUT seconds])
# (TIMEOUT: a normal build's, scaled by gpreempt_test_timeout.)
# Every `def test_*(` of the test_*.py files beside the calling CMakeLists.txt becomes its own ctest
# entry <PREFIX>.<file>.<test>, so that a pytest skip shows in ctest as "Skipped" with its reason
# (-rs) instead of hiding inside one passing entry, and a failure names its test. pytest exits 5
# when the name matched nothing (a renamed test with a stale configure), which fails the entry;
# CMake re-runs when a file changes. RUNNER goes before the interpreter (e.g. kfdsim run --).
function(gpreempt_add_pytests)
  cmake_parse_arguments(P "" "PREFIX;TIMEOUT" "RUNNER;ENVIRONMENT" ${ARGN})
  if(NOT P_TIMEOUT)
    set(P_TIMEOUT 60)
  endif()
  gpreempt_test_timeout(P_TIMEOUT ${P_TIMEOUT})
  # The sanitizer runtime (when there is one) must come first in /usr/bin/python3, which is not
  # instrumented but loads the instrumented module.
  gpreempt_python_test_environment(env)
  list(APPEND env "PYTHONPATH=${PROJECT_BINARY_DIR}/python" "PYTHONDONTWRITEBYTECODE=1" ${P_ENVIRONMENT})
  file(GLOB test_files CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/test_*.py)
  foreach(test_file IN LISTS test_files)
    get_filename_component(module ${test_file} NAME_WE)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${test_file})
    file(STRINGS ${test_file} defs REGEX "^def test_[A-Za-z0-9_]+\\(")
    foreach(def IN LISTS defs)
      string(REGEX REPLACE "^def (test_[A-Za-z0-9_]+)\\(.*" "\\1" name "${def}")
      set(ctest_name ${P_PREFIX}.${module}.${name})
      add_test(NAME ${ctest_name}
        COMMAND ${P_RUNNER} /usr/bin/python3 -m pytest -q -rs -p no:cacheprovider ${test_file}::${name}
        WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
      set_tests_properties(${ctest_name} PROPERTIES ENVIRONMENT "${env}"
        SKIP_REGULAR_EXPRESSION "[0-9]+ skipped" TIMEOUT ${P_TIMEOUT})
    endforeach()
  endforeach()
endfunction()

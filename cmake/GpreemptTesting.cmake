include(GoogleTest)

# Environment every test sees: where the fixtures are and where the build put its programs
# (bin/, lib/ under the build directory), so a test never guesses a path.
function(gpreempt_test_environment out)
  set(${out} "GPREEMPT_SHARED_DIR=${GPREEMPT_SHARED_DIR}"
             "GPREEMPT_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
             "GPREEMPT_BINARY_DIR=${PROJECT_BINARY_DIR}" PARENT_SCOPE)
endfunction()

# gpreempt_add_gtest(NAME SOURCES a.cpp b.cpp LIBS x y [DEPENDS targets...])
# One GoogleTest executable; each TEST becomes its own ctest entry. GTEST_SKIP shows as skipped.
function(gpreempt_add_gtest name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;DEPENDS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main gpreempt_warnings)
  if(T_DEPENDS)
    add_dependencies(${name} ${T_DEPENDS})
  endif()
  gpreempt_test_environment(env)
  gtest_discover_tests(${name}
    DISCOVERY_MODE PRE_TEST
    PROPERTIES ENVIRONMENT "${env}" SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]" TIMEOUT 120)
endfunction()

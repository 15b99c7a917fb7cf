# GPREEMPT_SANITIZE: build every target (libraries, programs, the Python module, the LD_PRELOAD
# shim, the tests) with sanitizers: empty (off), "address,undefined" or "thread".
# scripts/sanitize.sh builds and runs the suite this way in build-<name>.
set(GPREEMPT_SANITIZE "" CACHE STRING "Sanitizers for every target: empty, address,undefined or thread")
set_property(CACHE GPREEMPT_SANITIZE PROPERTY STRINGS "" "address,undefined" "thread")

# The runtime library a process must load FIRST when an instrumented library is loaded into a
# program that is not instrumented (python3 importing the module, any program under the shim):
# ASan refuses to start otherwise. kfdsim run and the test harnesses put it at the head of
# LD_PRELOAD; tests that start such programs themselves get it as GPREEMPT_SANITIZER_PRELOAD.
set(GPREEMPT_SANITIZER_PRELOAD "")

if(GPREEMPT_SANITIZE STREQUAL "")
  return()
endif()

if(GPREEMPT_SANITIZE STREQUAL "address,undefined")
  set(_flags -fsanitize=address,undefined -fno-sanitize-recover=undefined)
  set(_runtime libasan.so)
elseif(GPREEMPT_SANITIZE STREQUAL "thread")
  set(_flags -fsanitize=thread)
  set(_runtime libtsan.so)
else()
  message(FATAL_ERROR "GPREEMPT_SANITIZE='${GPREEMPT_SANITIZE}': expected empty, "
                      "'address,undefined' or 'thread'")
endif()

# Frame pointers make the reports' stacks complete in optimised code.
add_compile_options(${_flags} -fno-omit-frame-pointer)
# The ASan+UBSan build runs in CI on every change (scripts/test.sh), so its compile cost counts:
# -O1 (what the ASan documentation recommends) and line tables only (enough for the reports'
# file:line) instead of the build type's -O2 -g. Given after the build type's flags, they win.
if(GPREEMPT_SANITIZE STREQUAL "address,undefined")
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    add_compile_options(-O1 -gline-tables-only)
  else()
    add_compile_options(-O1 -g1)
  endif()
endif()
# GCC's -Wmaybe-uninitialized is unreliable with sanitizer instrumentation (GCC's manual says so
# for -fsanitize=address): GCC 12 reports libstdc++'s own std::regex/std::function internals. It
# stays a warning there, not an error; the normal -Werror build still has it as an error.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  add_compile_options(-Wno-error=maybe-uninitialized)
endif()
add_link_options(${_flags})

execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${_runtime}
  OUTPUT_VARIABLE _runtime_path OUTPUT_STRIP_TRAILING_WHITESPACE)
file(REAL_PATH "${_runtime_path}" _runtime_real)
if(NOT EXISTS "${_runtime_real}" OR IS_DIRECTORY "${_runtime_real}")
  message(FATAL_ERROR "GPREEMPT_SANITIZE=${GPREEMPT_SANITIZE}: ${CMAKE_CXX_COMPILER} has no ${_runtime} "
                      "(install the compiler's sanitizer runtime, e.g. Debian's libasan8/libtsan2)")
endif()
set(GPREEMPT_SANITIZER_PRELOAD "${_runtime_real}")
add_compile_definitions(GPREEMPT_SANITIZER_PRELOAD="${GPREEMPT_SANITIZER_PRELOAD}")
message(STATUS "Sanitizers: ${GPREEMPT_SANITIZE} (runtime preloaded where needed: ${GPREEMPT_SANITIZER_PRELOAD})")

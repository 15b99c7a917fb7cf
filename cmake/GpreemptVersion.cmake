# The project version has one home: project(VERSION) in the top-level CMakeLists.txt. It reaches
# the code through one generated header, gpreempt/version.h (installed beside gpreempt.h), which
# the C ABI, the Python module and every executable's --version read.
configure_file(${CMAKE_CURRENT_LIST_DIR}/version.h.in
               ${PROJECT_BINARY_DIR}/include/gpreempt/version.h @ONLY)
add_library(gpreempt_version INTERFACE)
target_include_directories(gpreempt_version INTERFACE
  $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>)

# Shared command-line conventions of every executable (tools/cli_common/cli_common.h): --version,
# range validators whose errors are one short sentence.
add_library(gpreempt_cli_common INTERFACE)
target_include_directories(gpreempt_cli_common INTERFACE ${PROJECT_SOURCE_DIR}/tools/cli_common)
target_link_libraries(gpreempt_cli_common INTERFACE gpreempt_version CLI11::CLI11)
# The command-line front ends (argument parsing, printing) get line tables only, not full debug
# information: CLI11's and JSON's templates made each such file cost ~20 s of CPU at -O2 -g and
# ~14 s at -O2 -g1 (tools/gpreempt/cmd_suspend.cpp), and these files are a fifth of what a fresh
# clone compiles. A backtrace still names file:line; the libraries they call keep full -g.
target_compile_options(gpreempt_cli_common INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:$<IF:$<CXX_COMPILER_ID:Clang>,-gline-tables-only,-g1>>)

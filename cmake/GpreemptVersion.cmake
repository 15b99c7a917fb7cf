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

# Warnings every target of ours gets; -Werror when GPREEMPT_WERROR is on (CI, scripts/test.sh).
add_library(gpreempt_warnings INTERFACE)
target_compile_options(gpreempt_warnings INTERFACE -Wall -Wextra
  $<$<BOOL:${GPREEMPT_WERROR}>:-Werror>)
# A unity build includes each .cpp into a batch file, and GCC then applies its header-only
# -Wsubobject-linkage to them: a TEST_F whose fixture sits in an anonymous namespace would warn,
# though in its own file (as the code is written and read) it is the usual form.
if(CMAKE_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(gpreempt_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-subobject-linkage>)
endif()

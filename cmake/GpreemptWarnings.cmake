# Warnings every target of ours gets; -Werror when GPREEMPT_WERROR is on (CI, scripts/test.sh).
add_library(gpreempt_warnings INTERFACE)
target_compile_options(gpreempt_warnings INTERFACE -Wall -Wextra
  $<$<BOOL:${GPREEMPT_WERROR}>:-Werror>)

// Registers the inspection functions (decode, analyze_log, queue_map) on the native module.
#pragma once

#include <pybind11/pybind11.h>

namespace gpreempt::python {

void register_inspect(pybind11::module_& m);

}  // namespace gpreempt::python

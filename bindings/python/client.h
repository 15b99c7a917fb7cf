// Registers gpreempt._gpreempt.Client (client::Connection) on the native module.
#pragma once

#include <pybind11/pybind11.h>

namespace gpreempt::python {

void register_client(pybind11::module_& m);

}  // namespace gpreempt::python

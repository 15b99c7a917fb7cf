// gpreempt._gpreempt.sim: simrt (the simulated GPU's user runtime) for Python — see sim.cpp.
#pragma once

#include <pybind11/pybind11.h>

namespace gpreempt::pysim {

// Adds the submodule `sim` to the extension module.
void register_sim(pybind11::module_& m);

}  // namespace gpreempt::pysim

// Registration hooks of the _stoker extension module, one per area (spdl style): each
// bind_<area>.cc defines one register_<area>() and holds no logic of its own.
#pragma once

#include <pybind11/pybind11.h>

namespace stoker::python {

void register_errors(pybind11::module_& m);   // bind_module.cc
void register_dataset(pybind11::module_& m);  // bind_dataset.cc
void register_sampler(pybind11::module_& m);  // bind_sampler.cc
void register_loader(pybind11::module_& m);   // bind_loader.cc
void register_cuda(pybind11::module_& m);     // bind_cuda.cc (GpuLoader only with CUDA)

}  // namespace stoker::python

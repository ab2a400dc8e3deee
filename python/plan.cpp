// fdstencil._core.ArrayPlan: a Plan (fdstencil/plan.hpp) applied to a caller's arrays in place,
// through views over their memory (view_of): no copy of either array. NumPy arrays on the host
// backends (cpu, reference); GPU arrays of a DLPack framework (CuPy, PyTorch) on cuda, the
// work enqueued on the caller's stream. The arrays hold the interior and a halo of R points on
// every side, (nz + 2R, ny + 2R, nx + 2R), x contiguous; the C++ plan is built for the strides and
// alignment of the arrays it meets (one per distinct layout, kept), since a plan's layout is fixed.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "bindings.hpp"
#include "fdstencil/device.hpp"
#include "fdstencil/device_field.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/field.hpp"
#include "fdstencil/plan.hpp"
#include "fdstencil/stencil.hpp"

namespace nb = nanobind;

namespace fdstencil::python {

namespace {

[[noreturn]] void bad(const std::string& what) { throw Error(ErrorKind::invalid_argument, what); }

template <class T>
using HostArray = nb::ndarray<T, nb::numpy, nb::ndim<3>, nb::device::cpu>;
// Any framework's CUDA array, taken through DLPack.
template <class T>
using GpuArray = nb::ndarray<T, nb::ndim<3>, nb::device::cuda>;

// Makes `device` the current GPU while it lives (plans are built and launched on the current
// one), then restores the caller's: a framework may have made another current meanwhile.
class OnDevice {
 public:
  explicit OnDevice(int device) : before_(cuda::current_device()) {
    if (device != before_) select_gpu(device);
  }
  ~OnDevice() {
    try {
      if (cuda::current_device() != before_) select_gpu(before_);
    } catch (...) {  // restoring is best effort: the work itself has already been enqueued
    }
  }
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;

 private:
  int before_;
};

class ArrayPlan {
 public:
  ArrayPlan(const std::string& op, int radius, int64_t nz, int64_t ny, int64_t nx, double hz, double hy,
            double hx, const std::string& dtype, const std::string& backend, int device)
      : stencil_{parse_op(op), radius, {hx, hy, hz}},
        interior_{nx, ny, nz},
        dtype_(dtype),
        backend_(backend),
        memory_(backend == "cuda" ? Memory::device : Memory::host) {
    validate(stencil_);
    validate_extents(stencil_, interior_);
    if (dtype != "float32" && dtype != "float64") bad("dtype must be float32 or float64, got " + dtype);
    if (backend != "cpu" && backend != "reference" && backend != "cuda")
      bad("backend '" + backend + "': expected cuda (GPU arrays), cpu or reference (NumPy arrays)");
    if (memory_ == Memory::device) {
      if (cuda::device_count() == 0) bad("backend 'cuda': " + cuda::no_device_reason());
      device_ = device >= 0 ? device : cuda::current_device();
    }
  }

  ArrayPlan(const ArrayPlan&) = delete;  // it owns its plans
  ArrayPlan& operator=(const ArrayPlan&) = delete;

  template <class T>
  void apply(const HostArray<const T>& in, const HostArray<T>& out) {
    if (memory_ != Memory::host) bad("the plan runs on cuda: give it GPU arrays");
    run<T>(view(in, "u"), view(out, "out"), nullptr);
  }

  // On `stream` (a cudaStream_t as an integer; 0 the legacy default stream) of the plan's GPU,
  // made current for the call; returns once the work is enqueued. Both arrays must live there.
  template <class T>
  void apply_gpu(const GpuArray<const T>& in, const GpuArray<T>& out, uintptr_t stream) {
    if (memory_ != Memory::device) bad("the plan runs on " + backend_ + ": give it NumPy arrays");
    if (in.device_id() != device_ || out.device_id() != device_)
      bad("u is on GPU " + std::to_string(in.device_id()) + " and out on GPU " +
          std::to_string(out.device_id()) + "; the plan was made on GPU " + std::to_string(device_));
    const OnDevice on(device_);
    run<T>(view(in, "u"), view(out, "out"), reinterpret_cast<Stream>(stream));
  }

  // The same on raw device pointers to the arrays' first (halo-corner) elements with their y and z
  // strides in elements, for the Python half's fast path over PyTorch and CuPy arrays, whose
  // shape, dtype, contiguous x and GPU it has checked: no DLPack import.
  template <class T>
  void apply_gpu_ptr(uintptr_t in, uintptr_t out, int64_t in_line, int64_t in_slice, int64_t out_line,
                     int64_t out_slice, int device, uintptr_t stream) {
    if (memory_ != Memory::device) bad("the plan runs on " + backend_ + ": give it NumPy arrays");
    if (device != device_)
      bad("the arrays are on GPU " + std::to_string(device) + "; the plan was made on GPU " +
          std::to_string(device_));
    const OnDevice on(device_);
    run<T>(view_at(reinterpret_cast<const T*>(in), in_line, in_slice),
           view_at(reinterpret_cast<T*>(out), out_line, out_slice), reinterpret_cast<Stream>(stream));
  }

  std::string describe() const { return last_ ? last_->describe().dump() : ""; }

 private:
  template <class T>
  void run(const FieldView<const T>& vin, const FieldView<T>& vout, Stream stream) {
    if (dtype_ != (sizeof(T) == 4 ? "float32" : "float64"))
      bad("the plan is for " + dtype_ + " arrays, given " + (sizeof(T) == 4 ? "float32" : "float64"));
    if (vin.layout().line() != vout.layout().line() || vin.layout().slice() != vout.layout().slice())
      bad("u and out have different strides: a plan applies to arrays of one layout");
    const Plan& plan = plan_for(vin.layout(), vout.layout());
    nb::gil_scoped_release nogil;
    plan.apply(vin, vout, stream);
  }

  template <class A>
  auto view(const A& a, const char* name) const {
    const int R = stencil_.radius;
    const int64_t want[3] = {interior_.nz + 2 * R, interior_.ny + 2 * R, interior_.nx + 2 * R};
    for (int d = 0; d < 3; ++d)
      if (int64_t(a.shape(size_t(d))) != want[d])
        bad(std::string(name) + ": expected shape (" + std::to_string(want[0]) + ", " +
            std::to_string(want[1]) + ", " + std::to_string(want[2]) + "), the interior and a halo of " +
            std::to_string(R) + " on every side; got (" + std::to_string(a.shape(0)) + ", " +
            std::to_string(a.shape(1)) + ", " + std::to_string(a.shape(2)) + ")");
    if (a.stride(2) != 1) bad(std::string(name) + ": x (the last axis) must be contiguous");
    auto* origin = a.data() + R * (a.stride(0) + a.stride(1) + 1);
    return view_of(origin, memory_, interior_, R, a.stride(1), a.stride(0));
  }

  template <class T>
  FieldView<T> view_at(T* corner, int64_t line, int64_t slice) const {
    const int R = stencil_.radius;
    return view_of(corner + R * (slice + line + 1), memory_, interior_, R, line, slice);
  }

  // The plan of this layout: built the first time it is met. Both arrays' alignment is the
  // weaker of the two, so one plan serves the pair.
  const Plan& plan_for(const Layout& a, const Layout& b) {
    const auto key = std::make_tuple(a.line(), a.slice(), std::min(a.align_bytes(), b.align_bytes()));
    auto it = plans_.find(key);
    if (it == plans_.end()) {
      PlanOptions o;
      o.backend = backend_;
      const Layout& weaker = a.align_bytes() <= b.align_bytes() ? a : b;
      it = plans_.emplace(key, std::make_unique<Plan>(stencil_, weaker, o)).first;
    }
    last_ = it->second.get();
    return *last_;
  }

  Stencil stencil_;
  Extents interior_;
  std::string dtype_, backend_;
  Memory memory_;
  int device_ = -1;  // the GPU a cuda plan was made on
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::unique_ptr<Plan>> plans_;
  const Plan* last_ = nullptr;  // the plan of the last call, for describe()
};

}  // namespace

void bind_plan(nb::module_& m) {
  nb::class_<ArrayPlan>(m, "ArrayPlan")
      .def(nb::init<const std::string&, int, int64_t, int64_t, int64_t, double, double, double,
                    const std::string&, const std::string&, int>())
      // noconvert: an array of another type or layout is refused, never copied into a temporary
      // that would take the result.
      .def("apply_f32", &ArrayPlan::apply<float>, nb::arg("u").noconvert(), nb::arg("out").noconvert())
      .def("apply_f64", &ArrayPlan::apply<double>, nb::arg("u").noconvert(), nb::arg("out").noconvert())
      .def("apply_gpu_f32", &ArrayPlan::apply_gpu<float>, nb::arg("u").noconvert(),
           nb::arg("out").noconvert(), nb::arg("stream"))
      .def("apply_gpu_f64", &ArrayPlan::apply_gpu<double>, nb::arg("u").noconvert(),
           nb::arg("out").noconvert(), nb::arg("stream"))
      .def("apply_gpu_ptr_f32", &ArrayPlan::apply_gpu_ptr<float>)
      .def("apply_gpu_ptr_f64", &ArrayPlan::apply_gpu_ptr<double>)
      .def("describe", &ArrayPlan::describe);
}

}  // namespace fdstencil::python

#include "fdstencil/dtype.hpp"

#include <string>

#include "fdstencil/error.hpp"

namespace fdstencil {

DType parse_dtype(std::string_view name) {
  if (name == "float" || name == "f32" || name == "float32") return DType::f32;
  if (name == "double" || name == "f64" || name == "float64") return DType::f64;
  throw Error(ErrorKind::invalid_argument, "unknown type '" + std::string(name) + "' (valid: float, double)");
}

}  // namespace fdstencil

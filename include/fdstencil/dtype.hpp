// The element types every operator comes in.
#pragma once

#include <cstdint>
#include <string_view>

namespace fdstencil {

enum class DType { f32, f64 };

inline std::string_view dtype_name(DType t) { return t == DType::f32 ? "float" : "double"; }
inline int64_t dtype_bytes(DType t) { return t == DType::f32 ? 4 : 8; }
DType parse_dtype(std::string_view name);  // "float"/"f32"/"float32", "double"/"f64"/"float64"

template <class T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::f32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::f64;
}

}  // namespace fdstencil

// Writes the fuzzers' seed inputs into DIR/<reader>/ (fuzz/build.sh, then `fuzz_seeds fuzz/seeds`):
// small valid files of each kind, written by the project's own writers where it has one, so that
// the fuzzers start from inputs that reach the end of each reader. NumPy's other layouts
// (big-endian, Fortran order, format 2.0) are written by hand, as np.save would write them.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fdstencil/npy.hpp"
#include "fdstencil/segy.hpp"
#include "fdstencil/wave.hpp"

namespace {

namespace fs = std::filesystem;
using namespace fdstencil;

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::vector<float> ramp(size_t n, float first, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = first + step * float(i);
  return v;
}

// An .npy file as NumPy writes one: the header dict, padded to 64 bytes, then `data` as given
// (already in the byte order and index order the header states).
void write_npy_as(const fs::path& path, const std::string& descr, bool fortran, const std::string& shape,
                  const std::vector<unsigned char>& data, int major = 1) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                     ", 'shape': " + shape + ", }";
  const size_t prefix = major == 1 ? 10 : 12;
  dict.append(64 - (prefix + dict.size() + 1) % 64, ' ');
  dict += '\n';
  std::string out("\x93NUMPY", 6);
  out += char(major);
  out += '\0';
  for (size_t b = 0; b < prefix - 8; ++b) out += char((dict.size() >> (8 * b)) & 0xff);
  write_text(path, out + dict + std::string(data.begin(), data.end()));
}

template <class T>
std::vector<unsigned char> bytes_of(const std::vector<T>& v, bool big_endian) {
  std::vector<unsigned char> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  if (big_endian)
    for (size_t at = 0; at < b.size(); at += sizeof(T))
      std::reverse(b.begin() + at, b.begin() + at + sizeof(T));
  return b;
}

void npy_seeds(const fs::path& dir) {
  const std::vector<float> model = ramp(12 * 12, 1500.f, 10.f);
  write_npy(dir / "model_2d_f4.npy", DType::f32, {12, 12}, model.data(), int64_t(model.size() * 4));
  const std::vector<float> model3 = ramp(3 * 4 * 5, 1800.f, 5.f);
  write_npy(dir / "model_3d_f4.npy", DType::f32, {3, 4, 5}, model3.data(), int64_t(model3.size() * 4));
  const std::vector<double> model64(model.begin(), model.end());
  write_npy(dir / "model_2d_f8.npy", DType::f64, {12, 12}, model64.data(), int64_t(model64.size() * 8));
  // The same (3, 4, 5) values in Fortran order: the first index fastest.
  std::vector<float> fortran(model3.size());
  for (size_t k = 0; k < 3; ++k)
    for (size_t j = 0; j < 4; ++j)
      for (size_t i = 0; i < 5; ++i) fortran[k + 3 * (j + 4 * i)] = model3[(k * 4 + j) * 5 + i];
  write_npy_as(dir / "model_3d_f4_fortran.npy", "<f4", true, "(3, 4, 5)", bytes_of(fortran, false));
  write_npy_as(dir / "model_2d_f4_big.npy", ">f4", false, "(12, 12)", bytes_of(model, true));
  const std::vector<double> fortran64(fortran.begin(), fortran.end());
  write_npy_as(dir / "model_3d_f8_fortran_big.npy", ">f8", true, "(3, 4, 5)", bytes_of(fortran64, true));
  write_npy_as(dir / "model_2d_f4_v2.npy", "<f4", false, "(12, 12)", bytes_of(model, false), 2);
  const std::vector<float> wavelet = {0.f, 0.25f, 1.f, -0.5f, 0.f, 0.1f};
  write_npy(dir / "wavelet_f4.npy", DType::f32, {6}, wavelet.data(), 24);
  const std::vector<double> wavelet64(wavelet.begin(), wavelet.end());
  write_npy_as(dir / "wavelet_f8_big.npy", ">f8", false, "(6,)", bytes_of(wavelet64, true));
  const std::vector<double> receivers = {10, 20, 10, 60, 10, 100};
  write_npy(dir / "receivers_f8.npy", DType::f64, {3, 2}, receivers.data(), 48);
  write_npy_as(dir / "receivers_f8_fortran.npy", "<f8", true, "(3, 2)",
               bytes_of(std::vector<double>{10, 10, 10, 20, 60, 100}, false));
  write_npy(dir / "empty_f4.npy", DType::f32, {0}, nullptr, 0);
}

void segy_seeds(const fs::path& dir) {
  segy::Grid g2;
  g2.dim = 2, g2.nz = 8, g2.ny = 1, g2.nx = 6, g2.dz = g2.dy = g2.dx = 10;
  g2.v = ramp(8 * 6, 1500.f, 20.f);
  segy::write_model(dir / "model_2d.sgy", g2);
  segy::Grid g3;
  g3.dim = 3, g3.nz = 5, g3.ny = 3, g3.nx = 4, g3.dz = g3.dy = g3.dx = 12.5;
  g3.v = ramp(5 * 3 * 4, 2000.f, 7.f);
  segy::write_model(dir / "model_3d.sgy", g3);
  segy::ShotRecord r;
  r.field_record = 7, r.dt = 0.002, r.ns = 10, r.dim = 2;
  r.source = {5, 0, 50};
  r.receivers = {{0, 0, 10}, {0, 0, 30}, {0, 0, 70}};
  r.traces = ramp(3 * 10, -1.f, 0.1f);
  segy::write_shot(dir / "shot_2d.sgy", r);
}

void survey_seeds(const fs::path& dir) {
  write_text(dir / "two_shots.json", R"({"shots": [{"source": [50, 50]}, {"source": "50,100"}]})");
  write_text(dir / "defaults_ids.json",
             R"({"description": "a line", "defaults": {"ricker": 12, "receiver_lines": ["0,0:0,200:11"]},
 "shots": [{"id": 3, "source": [40, 60], "delay": 0.1}, {"id": 9, "sources": [[40, 60], [40, 80]]}]})");
  write_text(dir / "files.json",
             R"({"shots": [{"id": 1, "sources_file": "sources.csv", "receivers": "rec.npy",
 "wavelet": "w.npy", "wavelet_dt": "0.001", "receiver_grids": "0:0,100,3:0,100,3"}]})");
  write_text(dir / "not_an_object.json", R"([1, 2, 3])");
}

void checkpoint_seeds(const fs::path& dir) {
  wave::Checkpoint c;
  c.step = 20, c.nt = 40, c.fingerprint = 0x0123456789abcdefull, c.backend = "cpu";
  c.arrays = {{"u", std::vector<char>(64, 1)},
              {"u_prev", std::vector<char>(64, 2)},
              {"traces", std::vector<char>(16, 3)}};
  wave::save_checkpoint(dir / "cpu_float.ckpt", c);
  c.element_bytes = 8, c.backend = "cuda";
  c.arrays = {{"u", std::vector<char>(32, 4)}, {"pml_z_psi", std::vector<char>(8, 5)}, {"traces", {}}};
  wave::save_checkpoint(dir / "double_pml.ckpt", c);
  c.arrays.clear();
  wave::save_checkpoint(dir / "no_arrays.ckpt", c);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR (writes DIR/npy, DIR/segy, DIR/survey, DIR/checkpoint)\n", argv[0]);
    return 2;
  }
  const fs::path root = argv[1];
  for (const char* reader : {"npy", "segy", "survey", "checkpoint"}) fs::create_directories(root / reader);
  npy_seeds(root / "npy");
  segy_seeds(root / "segy");
  survey_seeds(root / "survey");
  checkpoint_seeds(root / "checkpoint");
  return 0;
}

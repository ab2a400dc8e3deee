// What the tests of a split run's state share (tests/mpi, cpu over MPI and GPUs over NCCL): its
// checkpoints, snapshots and resumes against one rank's, in the one-rank formats. Every rank runs
// each helper: the one-rank runs by itself, then its slab of the split runs; rank 0 compares.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <vector>

#include "fdstencil/npy.hpp"
#include "fdstencil/wave.hpp"
#include "fdstencil/wave_comm.hpp"
#include "mpi/slab_test_util.hpp"

namespace fdstencil::wave::test {

struct Checkpointed {
  Result result;
  std::vector<Checkpoint> checkpoints;  // those this rank was handed
};

// The case with a checkpoint every `every` steps, on one rank (comm nullptr) or split.
inline Checkpointed run_checkpointed(const Case& c, Comm* comm, int64_t every) {
  Checkpointed out;
  Options o = c.options;
  o.comm = comm;
  o.checkpoint_every = every;
  o.on_checkpoint = [&out](Checkpoint k) { out.checkpoints.push_back(std::move(k)); };
  out.result = run(c.model, o);
  return out;
}

// A trace sample of a checkpoint's "traces" array, whatever its precision.
inline double trace_sample(const Checkpoint& k, int64_t at) {
  const std::vector<char>& b = k.arrays.back().second;
  if (k.element_bytes == 8) {
    double v;
    std::memcpy(&v, b.data() + at * 8, 8);
    return v;
  }
  float v;
  std::memcpy(&v, b.data() + at * 4, 4);
  return v;
}

// A split run's checkpoint against one rank's of the same step: the same header, every state
// array the same to the byte (u and u_prev in the whole domain's storage, the CPML's memory
// variables in their one-rank layout), and the traces as expect_same_run has them.
inline void expect_same_checkpoint(const Checkpoint& one, const Checkpoint& many, const Case& c,
                                   const Domain& d, int ranks, int reach, bool exact_traces) {
  EXPECT_EQ(many.step, one.step);
  EXPECT_EQ(many.nt, one.nt);
  EXPECT_EQ(many.fingerprint, one.fingerprint);
  EXPECT_EQ(many.backend, one.backend);
  EXPECT_EQ(many.element_bytes, one.element_bytes);
  ASSERT_EQ(many.arrays.size(), one.arrays.size());
  for (size_t i = 0; i + 1 < one.arrays.size(); ++i) {
    const auto& [name, a] = one.arrays[i];
    EXPECT_EQ(many.arrays[i].first, name);
    const std::vector<char>& b = many.arrays[i].second;
    ASSERT_EQ(b.size(), a.size()) << name;
    int64_t differ = 0;
    for (size_t e = 0; e < a.size(); ++e) differ += a[e] != b[e];
    EXPECT_EQ(differ, 0) << "bytes of '" << name << "' that differ from the one-rank checkpoint at step "
                         << one.step;
  }

  ASSERT_EQ(many.arrays.back().second.size(), one.arrays.back().second.size());
  const auto slabs = d.split_z(ranks, slab_layer_cost(c.options));
  const int64_t nt = c.options.nt;
  for (size_t r = 0; r < c.options.receivers.size(); ++r) {
    double scale = 0;
    for (int64_t n = 0; n < nt; ++n)
      scale = std::max(scale, std::abs(trace_sample(one, int64_t(r) * nt + n)));
    const bool one_slab = inside_one_slab(c.options.receivers[r].z, c.model.h, d, slabs, reach);
    const double tol = one_slab && exact_traces ? 0 : (one_slab ? 5e-6 : 1e-5) * scale;
    for (int64_t n = 0; n < nt; ++n)
      ASSERT_LE(std::abs(trace_sample(one, int64_t(r) * nt + n) - trace_sample(many, int64_t(r) * nt + n)),
                tol)
          << "receiver " << r << ", step " << n << " of the checkpoint at step " << one.step;
  }
}

// Checkpoints every 50 steps, split and on one rank: rank 0 is handed the same ones, the others none.
inline void expect_split_checkpoints_match(Comm& comm, const Case& c, int reach, bool exact_traces = true) {
  const Checkpointed one = run_checkpointed(c, nullptr, 50);
  const Checkpointed many = run_checkpointed(c, &comm, 50);
  if (comm.rank() != 0) {
    EXPECT_TRUE(many.checkpoints.empty()) << "only rank 0 hands out a split run's checkpoints";
    return;
  }
  ASSERT_EQ(one.checkpoints.size(), size_t((c.options.nt - 1) / 50));
  ASSERT_EQ(many.checkpoints.size(), one.checkpoints.size());
  for (size_t i = 0; i < one.checkpoints.size(); ++i)
    expect_same_checkpoint(one.checkpoints[i], many.checkpoints[i], c, one.result.domain, comm.size(), reach,
                           exact_traces);
  // States, not zeros that agree: by the last checkpoint u has moved, and so have the z CPML's
  // memory variables (their slots lie in the first and last ranks' slabs).
  const auto moved = [](const std::vector<char>& b) {
    return std::count(b.begin(), b.end(), char(0)) != std::ptrdiff_t(b.size());
  };
  EXPECT_TRUE(moved(one.checkpoints.back().arrays[0].second)) << "u";
  EXPECT_TRUE(moved(one.checkpoints.back().arrays[8].second)) << "pml_z_psi";
}

// Snapshots at steps 0, 37, 99 and nt: rank 0 is handed the one-rank snapshots, to the bit.
inline void expect_split_snapshots_match(Comm& comm, const Case& c) {
  const auto snapshots = [&c](Comm* k) {
    std::vector<Snapshot> out;
    Options o = c.options;
    o.comm = k;
    o.snapshot_steps = {99, 0, 37, c.options.nt};
    o.on_snapshot = [&out](const Snapshot& s) { out.push_back(s); };
    run(c.model, o);
    return out;
  };
  const std::vector<Snapshot> one = snapshots(nullptr), many = snapshots(&comm);
  if (comm.rank() != 0) {
    EXPECT_TRUE(many.empty()) << "only rank 0 hands out a split run's snapshots";
    return;
  }
  ASSERT_EQ(one.size(), 4u);
  ASSERT_EQ(many.size(), one.size());
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(many[i].step, one[i].step);
    ASSERT_EQ(many[i].field.size(), one[i].field.size());
    int64_t differ = 0;
    float peak = 0;
    for (size_t p = 0; p < one[i].field.size(); ++p) {
      differ += many[i].field[p] != one[i].field[p];
      peak = std::max(peak, std::abs(one[i].field[p]));
    }
    EXPECT_EQ(differ, 0) << "points of the snapshot at step " << one[i].step << " that differ";
    if (one[i].step > 0) {
      EXPECT_GT(peak, 0.f) << "step " << one[i].step;
    }
  }
}

// A stop requested at step `at` (stop_requested is asked once per step, from the first), with
// the checkpoint it hands out there.
inline std::optional<Checkpoint> stopped_at(const Case& c, Comm* comm, int64_t at, bool asks,
                                            Result* result) {
  std::optional<Checkpoint> out;
  Options o = c.options;
  o.comm = comm;
  auto calls = std::make_shared<int64_t>(0);
  if (asks) o.stop_requested = [calls, at] { return ++*calls > at; };
  o.on_checkpoint = [&out](Checkpoint k) { out = std::move(k); };
  *result = run(c.model, o);
  return out;
}

// Across rank counts both ways: a split run resumes one rank's checkpoint (rank 0 alone holds it),
// and one rank resumes the checkpoint of a split run stopped by its last rank alone. Both end
// with the uninterrupted one-rank run's field and traces (expect_same_run).
inline void expect_resumes_across_rank_counts(Comm& comm, const Case& c, int reach,
                                              bool exact_traces = true) {
  const Result whole = run(c.model, c.options);
  Result r;
  std::optional<Checkpoint> at70 = stopped_at(c, nullptr, 70, true, &r);
  ASSERT_TRUE(r.interrupted);
  ASSERT_TRUE(at70.has_value());
  ASSERT_EQ(at70->step, 70);

  Options o = c.options;
  o.comm = &comm;
  o.resume = comm.rank() == 0 ? &*at70 : nullptr;
  const Result resumed = run(c.model, o);
  EXPECT_EQ(resumed.first_step, 70) << "rank " << comm.rank();
  if (comm.rank() == 0) expect_same_run(whole, resumed, c, comm.size(), reach, false, exact_traces);

  const bool last = comm.rank() == comm.size() - 1;
  std::optional<Checkpoint> at90 = stopped_at(c, &comm, 90, last, &r);
  EXPECT_TRUE(r.interrupted) << "rank " << comm.rank();
  EXPECT_EQ(r.steps_done, 90) << "rank " << comm.rank();
  EXPECT_TRUE(r.traces.empty() && r.final_field.empty()) << "an interrupted run returns no results";
  if (comm.rank() != 0) {
    EXPECT_FALSE(at90.has_value()) << "only rank 0 hands out a split run's checkpoints";
    return;
  }
  ASSERT_TRUE(at90.has_value());
  EXPECT_EQ(at90->step, 90);
  Options back = c.options;
  back.resume = &*at90;
  const Result finished = run(c.model, back);
  EXPECT_EQ(finished.first_step, 90);
  // The traces before step 90 are the split run's sums: receivers straddling slabs to round-off.
  expect_same_run(whole, finished, c, comm.size(), reach, false, exact_traces);
}

// A folder every rank sees (the ranks of these tests share a machine), named by rank 0's pid and
// `tag`; rank 0 makes it and removes it once every rank is done.
class SharedDir {
 public:
  SharedDir(Comm& comm, const std::string& tag) : comm_(comm) {
    int64_t pid = ::getpid();
    comm_.broadcast(&pid, sizeof pid);
    path_ = std::filesystem::temp_directory_path() / ("fdstencil_split_" + tag + "_" + std::to_string(pid));
    if (comm_.rank() == 0) {
      std::filesystem::remove_all(path_);
      std::filesystem::create_directories(path_);
    }
    comm_.all(true);
  }
  ~SharedDir() {
    comm_.all(true);
    std::error_code ec;
    if (comm_.rank() == 0) std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  // The names in the folder (a temporary left behind would show here).
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path_))
      out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  Comm& comm_;
  std::filesystem::path path_;
};

// Checkpoints every 50 steps written by every rank into one file (Options::split_checkpoint_file):
// none is handed to on_checkpoint, and the file left is the one-rank run's last checkpoint, its
// checksums (combined from the ranks' parts) verified by load_checkpoint.
inline void expect_checkpoint_files_match(Comm& comm, const Case& c, int reach, bool exact_traces = true) {
  const Checkpointed one = run_checkpointed(c, nullptr, 50);
  SharedDir dir(comm, "ckpt");
  Options o = c.options;
  o.comm = &comm;
  o.checkpoint_every = 50;
  o.split_checkpoint_file = dir.path() / "state.ckpt";
  int handed = 0;
  o.on_checkpoint = [&handed](Checkpoint) { ++handed; };
  const Result r = run(c.model, o);
  EXPECT_EQ(handed, 0) << "rank " << comm.rank();
  EXPECT_EQ(r.timing.checkpoints, int64_t((c.options.nt - 1) / 50)) << "rank " << comm.rank();
  EXPECT_GT(r.timing.checkpoint_bytes, 0);
  comm.all(true);
  if (comm.rank() != 0) return;
  EXPECT_EQ(dir.names(), std::vector<std::string>{"state.ckpt"}) << "a temporary was left behind";
  ASSERT_FALSE(one.checkpoints.empty());
  const Checkpoint k = load_checkpoint(o.split_checkpoint_file);
  expect_same_checkpoint(one.checkpoints.back(), k, c, one.result.domain, comm.size(), reach, exact_traces);
  EXPECT_EQ(r.timing.checkpoint_bytes, k.bytes());
}

// Checkpoint files across rank counts, each rank reading its own part (Options::split_resume_file):
// a split run resumes one rank's file, one rank resumes the file a split run wrote when its last
// rank alone was stopped, and a split run resumes that file too. All three end with the
// uninterrupted one-rank run's field and traces.
inline void expect_resumes_from_files(Comm& comm, const Case& c, int reach, bool exact_traces = true) {
  const Result whole = run(c.model, c.options);
  Result r;
  const std::optional<Checkpoint> at70 = stopped_at(c, nullptr, 70, true, &r);
  ASSERT_TRUE(at70.has_value());
  SharedDir dir(comm, "resume");
  if (comm.rank() == 0) save_checkpoint(dir.path() / "one.ckpt", *at70);
  comm.all(true);
  const auto resume_split = [&](const std::filesystem::path& file, int64_t step) {
    Options o = c.options;
    o.comm = &comm;
    o.split_resume_file = file;
    const Result resumed = run(c.model, o);
    EXPECT_EQ(resumed.first_step, step) << "rank " << comm.rank();
    if (comm.rank() == 0) expect_same_run(whole, resumed, c, comm.size(), reach, false, exact_traces);
  };
  resume_split(dir.path() / "one.ckpt", 70);

  Options o = c.options;
  o.comm = &comm;
  o.split_checkpoint_file = dir.path() / "split.ckpt";
  auto calls = std::make_shared<int64_t>(0);
  if (comm.rank() == comm.size() - 1) o.stop_requested = [calls] { return ++*calls > 90; };
  r = run(c.model, o);
  EXPECT_TRUE(r.interrupted) << "rank " << comm.rank();
  comm.all(true);
  if (comm.rank() == 0) {
    const Checkpoint at90 = load_checkpoint(o.split_checkpoint_file);
    EXPECT_EQ(at90.step, 90);
    Options back = c.options;
    back.resume = &at90;
    const Result finished = run(c.model, back);
    EXPECT_EQ(finished.first_step, 90);
    expect_same_run(whole, finished, c, comm.size(), reach, false, exact_traces);
  }
  resume_split(dir.path() / "split.ckpt", 90);
}

// A damaged checkpoint file (one byte of u changed) and another run's: every rank of a split run
// refuses it with the same message and none waits for another.
inline void expect_bad_files_refused_on_every_rank(Comm& comm, const Case& c) {
  Result r;
  const std::optional<Checkpoint> at70 = stopped_at(c, nullptr, 70, true, &r);
  ASSERT_TRUE(at70.has_value());
  SharedDir dir(comm, "bad");
  const std::filesystem::path damaged = dir.path() / "damaged.ckpt", other = dir.path() / "other.ckpt";
  if (comm.rank() == 0) {
    save_checkpoint(damaged, *at70);
    Checkpoint k = *at70;
    ++k.fingerprint;
    save_checkpoint(other, k);
    // A byte in the middle of u (the first array, after the header): a bit flipped on the disk.
    const auto size = std::filesystem::file_size(damaged);
    const auto at = std::streamoff(size - k.bytes() + k.arrays[0].second.size() / 2);
    std::fstream f(damaged, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(at);
    char b = 0;
    f.get(b);
    f.seekp(at);
    f.put(char(b ^ 0x10));
  }
  comm.all(true);
  const auto refusal = [&](const std::filesystem::path& file) {
    Options o = c.options;
    o.comm = &comm;
    o.split_resume_file = file;
    try {
      run(c.model, o);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string corrupt = refusal(damaged);
  EXPECT_NE(corrupt.find("array u does not match its checksum"), std::string::npos)
      << "rank " << comm.rank() << ": " << corrupt;
  const std::string foreign = refusal(other);
  EXPECT_NE(foreign.find("belongs to a different run"), std::string::npos)
      << "rank " << comm.rank() << ": " << foreign;
  EXPECT_TRUE(comm.all(true)) << "the ranks are still together";
}

// Snapshots and the final field written by every rank into .npy files (Options::split_snapshot_file,
// split_final_file): the one-rank run's fields to the bit, none handed out or returned.
inline void expect_field_files_match(Comm& comm, const Case& c) {
  std::vector<Snapshot> one;
  Options o = c.options;
  o.snapshot_steps = {99, 0, 37, c.options.nt};
  o.on_snapshot = [&one](const Snapshot& s) { one.push_back(s); };
  const Result alone = run(c.model, o);
  SharedDir dir(comm, "fields");
  int handed = 0;
  o.on_snapshot = [&handed](const Snapshot&) { ++handed; };
  o.comm = &comm;
  o.split_snapshot_file = [&dir](int64_t step) {
    return dir.path() / ("snap_" + std::to_string(step) + ".npy");
  };
  o.split_final_file = dir.path() / "final.npy";
  const Result split = run(c.model, o);
  EXPECT_EQ(handed, 0) << "rank " << comm.rank();
  EXPECT_TRUE(split.final_field.empty()) << "rank " << comm.rank();
  comm.all(true);
  if (comm.rank() != 0) return;
  ASSERT_EQ(one.size(), 4u);
  const auto expect_file = [&](const std::filesystem::path& file, const std::vector<float>& want) {
    const NpyArray a = read_npy(file);
    const std::vector<int64_t> shape = c.model.dim == 3
                                           ? std::vector<int64_t>{c.model.nz, c.model.ny, c.model.nx}
                                           : std::vector<int64_t>{c.model.nz, c.model.nx};
    EXPECT_EQ(a.shape, shape) << file;
    ASSERT_EQ(a.bytes.size(), want.size() * sizeof(float)) << file;
    EXPECT_EQ(std::memcmp(a.bytes.data(), want.data(), a.bytes.size()), 0)
        << file << " differs from one rank's";
  };
  for (const Snapshot& s : one)
    expect_file(dir.path() / ("snap_" + std::to_string(s.step) + ".npy"), s.field);
  expect_file(o.split_final_file, alone.final_field);
  EXPECT_EQ(dir.names().size(), 5u) << "four snapshots and the final field, no temporaries";
}

}  // namespace fdstencil::wave::test

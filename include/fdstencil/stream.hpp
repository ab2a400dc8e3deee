// The stream a plan enqueues its work on, without including the CUDA headers: Stream is the same
// type as cudaStream_t, so a caller passes its own stream (or nullptr, the default stream).
#pragma once

struct CUstream_st;

namespace fdstencil {

using Stream = CUstream_st*;

}  // namespace fdstencil

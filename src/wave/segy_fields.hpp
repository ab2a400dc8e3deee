// The SEG-Y header fields fdstencil reads and writes: 1-based byte positions as the standard
// numbers them (a trace header's 1-240, the binary header's 3201-3600) and sizes in bytes.
#pragma once

namespace fdstencil::segy::detail {

struct Field {
  int position;
  int size;
};

// Trace header (rev 1 positions).
namespace tr {
inline constexpr Field seq_line{1, 4}, seq_file{5, 4}, field_record{9, 4}, channel{13, 4}, ensemble{21, 4};
inline constexpr Field trace_id{29, 2}, offset{37, 4}, group_elevation{41, 4}, source_depth{49, 4};
inline constexpr Field elevation_scalar{69, 2}, coordinate_scalar{71, 2}, source_x{73, 4}, source_y{77, 4};
inline constexpr Field group_x{81, 4}, group_y{85, 4}, coordinate_units{89, 2}, delay{109, 2};
inline constexpr Field samples{115, 2}, interval{117, 2}, cdp_x{181, 4}, cdp_y{185, 4};
inline constexpr Field inline_number{189, 4}, crossline_number{193, 4}, time_scalar{215, 2};
}  // namespace tr

// Binary header (rev 2 positions; rev 1 leaves 3261-3500 unassigned).
namespace bin {
inline constexpr Field ensemble_traces{3213, 2}, interval{3217, 2}, interval_original{3219, 2};
inline constexpr Field samples{3221, 2}, samples_original{3223, 2}, format{3225, 2}, ensemble_fold{3227, 2};
inline constexpr Field sorting{3229, 2}, measurement_system{3255, 2}, extended_samples{3269, 4};
// The revision is two single bytes, major then minor, whatever the file's byte order.
inline constexpr Field byte_order_constant{3297, 4}, revision_major{3501, 1}, revision_minor{3502, 1};
inline constexpr Field fixed_length{3503, 2};
inline constexpr Field extended_text{3505, 2}, additional_trace_headers{3507, 2}, first_trace{3521, 8};
}  // namespace bin

}  // namespace fdstencil::segy::detail

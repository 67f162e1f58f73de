// Internal: 128-bit integers for exact sums and cross products of int64 values. GCC and
// Clang provide them as an extension; __extension__ keeps -Wpedantic quiet in one place.
#pragma once

namespace pairperm::detail {

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

constexpr i128 abs128(i128 v) { return v < 0 ? -v : v; }

}  // namespace pairperm::detail

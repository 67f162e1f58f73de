// Internal: the rows of a score matrix that many pairs read, narrowed once to bytes where every
// score fits (per-item counts and scores mostly do): a pair's pass then reads an eighth of the
// memory, and the byte kernels of local_effects.cpp count its differences.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pairperm::detail {

struct NarrowRows {
    std::vector<std::vector<std::int8_t>> bytes;  // empty for a row that is not narrowed
    std::vector<std::int64_t> sums;               // each narrowed row's sum

    bool narrowed(std::size_t row) const { return !bytes[row].empty(); }
};

// Narrows every row of the (n_systems, n) matrix that some pair reads (pairs: n_pairs index
// pairs, flattened) and whose scores all lie in [-128, 127].
NarrowRows narrow_rows(const std::int64_t* scores, std::size_t n_systems, std::size_t n, const std::int64_t* pairs,
                       std::size_t n_pairs);

// The tally of d = x - y over two narrowed rows: negative[a] and positive[a] count the entries
// with d = -a and d = a (a = 1..255), zeros those with d = 0. The byte kernels count |d| and
// the positive d, each while a block of them is still in cache.
struct DifferenceTally {
    std::vector<std::int64_t> negative, positive;
    std::int64_t zeros = 0;
    std::uint32_t largest = 0;  // no |d| above it
};
void tally_differences(const std::int8_t* x, const std::int8_t* y, std::size_t n, DifferenceTally& out);

}  // namespace pairperm::detail

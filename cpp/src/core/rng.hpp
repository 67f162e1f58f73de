// Internal random number generation for the resampling routines (not installed).
#pragma once

#include <cstdint>

#include "core/int128.hpp"

namespace pairperm::detail {

inline std::uint64_t splitmix64(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

// xoshiro256** (Blackman & Vigna): fast, small state, passes BigCrush.
class Xoshiro256 {
public:
    explicit Xoshiro256(std::uint64_t seed) {
        for (auto& w : s_) w = splitmix64(seed);
    }
    std::uint64_t operator()() {
        const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }

    // Uniform on [0, n), n >= 1, without modulo bias (Lemire 2019: multiply, reject the
    // few low products that would over-represent some values).
    std::uint64_t below(std::uint64_t n) {
        u128 prod = static_cast<u128>((*this)()) * n;
        auto low = static_cast<std::uint64_t>(prod);
        if (low < n) {
            const std::uint64_t threshold = (0 - n) % n;
            while (low < threshold) {
                prod = static_cast<u128>((*this)()) * n;
                low = static_cast<std::uint64_t>(prod);
            }
        }
        return static_cast<std::uint64_t>(prod >> 64);
    }

private:
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    std::uint64_t s_[4];
};

// The independent stream of block (or row) `index` of a seeded computation: results depend
// on (seed, index) only, never on which thread drew them.
inline Xoshiro256 block_stream(std::uint64_t seed, std::uint64_t index) {
    std::uint64_t mix = seed ^ (0xD1B54A32D192ED03ULL * (index + 1));
    return Xoshiro256(splitmix64(mix));
}

}  // namespace pairperm::detail

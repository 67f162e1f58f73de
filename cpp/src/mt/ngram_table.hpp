// Internal: the per-segment hash tables of the MT statistics - a hypothesis' distinct n-grams
// with their counts (each reference then only looks its n-grams up), and the ids of the
// hypothesis' words. Keys are exact (packed code points or word ids, compared in full), so a
// hash collision costs a probe, never a wrong count. Both tables are emptied per segment in
// the time of what the segment put in, not of their capacity.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "mt/text.hpp"

namespace pairperm::mt {

// A 128-bit n-gram key: fields of (code point + 1) or (word id + 1), so that no key is zero
// and an n-gram's length shows in its nonzero fields.
struct NgramKey {
    std::uint64_t lo = 0, hi = 0;
};

inline std::uint64_t mix64(std::uint64_t h) {  // splitmix64's finaliser
    h ^= h >> 30;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 27;
    h *= 0x94D049BB133111EBULL;
    h ^= h >> 31;
    return h;
}

struct NgramSlot {
    NgramKey key;             // lo == hi == 0: empty
    std::int32_t hyp = 0;     // occurrences in the hypothesis
    std::int32_t ref = 0;     // occurrences in the reference of pass `pass`
    std::int32_t best = 0;    // the largest min(hyp, ref) over the references passed so far
    std::uint32_t pass = 0;   // the reference pass `ref` counts for
    std::int32_t order = 0;   // which statistics column this n-gram counts in (0-based)
};

class NgramTable {
public:
    // Empties the table and makes room for `keys` distinct keys at load <= 1/2.
    void reset(std::size_t keys) {
        for (const std::size_t s : used_) slots_[s] = NgramSlot{};
        used_.clear();
        std::size_t capacity = 64;
        while (capacity < 2 * keys) capacity *= 2;
        if (capacity > slots_.size()) slots_.assign(capacity, NgramSlot{});
        mask_ = slots_.size() - 1;
    }

    // Counts one occurrence of `key` in the hypothesis; room must have been made by reset().
    void add_hypothesis(NgramKey key, int order) {
        NgramSlot& s = slots_[probe(key)];
        if (s.hyp == 0) {
            s.key = key;
            s.order = order;
            used_.push_back(static_cast<std::size_t>(&s - slots_.data()));
        }
        ++s.hyp;
    }

    // The hypothesis' slot of `key`, or nullptr when the hypothesis does not hold it.
    NgramSlot* find(NgramKey key) {
        NgramSlot& s = slots_[probe(key)];
        return s.hyp == 0 ? nullptr : &s;
    }

    // Starts counting a new reference: every slot's `ref` counts from zero again.
    std::uint32_t next_pass() { return ++pass_; }

    // One occurrence of a hypothesis n-gram in the current reference; true when it is matched
    // (the reference has no more of it than the hypothesis: sacrebleu's min(hyp, ref)).
    bool count_reference(NgramSlot& s) const {
        if (s.pass != pass_) {
            s.pass = pass_;
            s.ref = 0;
        }
        return ++s.ref <= s.hyp;
    }

private:
    // The slot holding `key`, or the empty slot where it would go (linear probing).
    std::size_t probe(NgramKey key) const {
        std::size_t i = static_cast<std::size_t>(mix64(key.lo ^ mix64(key.hi))) & mask_;
        for (;;) {
            const NgramSlot& s = slots_[i];
            if ((s.key.lo == key.lo && s.key.hi == key.hi) || (s.key.lo == 0 && s.key.hi == 0)) return i;
            i = (i + 1) & mask_;
        }
    }

    std::vector<NgramSlot> slots_;
    std::vector<std::size_t> used_;
    std::size_t mask_ = 0;
    std::uint32_t pass_ = 0;
};

// The hypothesis' words, numbered in order of first appearance; a reference's words are only
// looked up (a word the hypothesis lacks can match nothing). Words point into the caller's
// text, which must outlive the table's use.
class WordIds {
public:
    static constexpr std::uint32_t absent = 0xFFFFFFFFu;

    void reset(std::size_t words) {
        for (const std::size_t s : used_) slots_[s] = Slot{};
        used_.clear();
        std::size_t capacity = 64;
        while (capacity < 2 * words) capacity *= 2;
        if (capacity > slots_.size()) slots_.assign(capacity, Slot{});
        mask_ = slots_.size() - 1;
    }

    std::uint32_t add(Span w) {
        const std::uint64_t h = hash(w);
        Slot& s = slots_[probe(w, h)];
        if (s.begin == nullptr) {
            s = Slot{h, w.begin, w.size, static_cast<std::uint32_t>(used_.size())};
            used_.push_back(static_cast<std::size_t>(&s - slots_.data()));
        }
        return s.id;
    }

    std::uint32_t find(Span w) const {
        const Slot& s = slots_[probe(w, hash(w))];
        return s.begin == nullptr ? absent : s.id;
    }

private:
    struct Slot {
        std::uint64_t hash = 0;
        const char32_t* begin = nullptr;  // nullptr: empty
        std::size_t size = 0;
        std::uint32_t id = 0;
    };

    static std::uint64_t hash(Span w) {
        std::uint64_t h = 0xCBF29CE484222325ULL ^ w.size;
        for (std::size_t i = 0; i < w.size; ++i) h = (h ^ w.begin[i]) * 0x100000001B3ULL;  // FNV-1a by code point
        return mix64(h);
    }

    std::size_t probe(Span w, std::uint64_t h) const {
        std::size_t i = static_cast<std::size_t>(h) & mask_;
        for (;;) {
            const Slot& s = slots_[i];
            if (s.begin == nullptr) return i;
            if (s.hash == h && s.size == w.size && std::equal(w.begin, w.begin + w.size, s.begin)) return i;
            i = (i + 1) & mask_;
        }
    }

    std::vector<Slot> slots_;
    std::vector<std::size_t> used_;
    std::size_t mask_ = 0;
};

}  // namespace pairperm::mt

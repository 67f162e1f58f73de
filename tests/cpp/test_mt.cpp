// Unit tests of the core's per-sentence MT statistics on sentences whose counts are worked out by
// hand (the Python tests compare with sacrebleu itself on many more). Plain checks, no
// framework: built with -DPAIRPERM_BUILD_TESTS=ON and run by ctest; the exit status is the
// number of failures.
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "pairperm/mt_statistics.hpp"

namespace {

int checks = 0;
int failures = 0;

using Row = std::vector<std::int64_t>;

std::string text_of(const Row& row) {
    std::string s;
    for (const auto v : row) s += std::to_string(v) + " ";
    return s;
}

void check_row(const Row& got, const Row& want, const char* what) {
    ++checks;
    if (got != want) {
        ++failures;
        std::fprintf(stderr, "%s: got [%s], want [%s]\n", what, text_of(got).c_str(), text_of(want).c_str());
    }
}

pairperm::MtText text(const char* s) { return {s, std::char_traits<char>::length(s)}; }

// One hypothesis against references (nullptr: that stream has none).
Row bleu(const char* hyp, std::vector<const char*> refs, pairperm::MtTokenizer tokenizer) {
    const pairperm::MtText h = text(hyp);
    std::vector<pairperm::MtText> r;
    for (const char* s : refs) r.push_back(s == nullptr ? pairperm::MtText{} : text(s));
    Row out(pairperm::bleu_statistics_columns);
    pairperm::bleu_statistics(&h, r.data(), 1, r.size(), tokenizer, 1, out.data());
    return out;
}

Row chrf(const char* hyp, const char* ref, int word_order) {
    const pairperm::MtText h = text(hyp), r = text(ref);
    Row out(pairperm::chrf_statistics_columns(word_order));
    pairperm::chrf_statistics(&h, &r, 1, 1, word_order, 1, out.data());
    return out;
}

template <class F>
void check_throws_invalid_argument(F f, const char* what) {
    ++checks;
    try {
        f();
    } catch (const std::invalid_argument&) {
        return;
    }
    ++failures;
    std::fprintf(stderr, "%s: no std::invalid_argument\n", what);
}

void test_bleu_13a() {
    using pairperm::MtTokenizer;
    // "Hello , world !" (the comma after a letter and the "!" split off) against "Hello world":
    // 2 of 4 unigrams match, no longer n-gram does.
    check_row(bleu("Hello, world!", {"Hello world"}, MtTokenizer::v13a), {4, 2, 2, 0, 0, 0, 4, 3, 2, 1}, "13a punctuation");
    // Between digits, periods and commas stay ("3.5", "1,000"); a dash after a digit is split off.
    check_row(bleu("3.5 1,000 2-3", {"3.5 1,000 2 - 3"}, MtTokenizer::v13a), {5, 5, 5, 4, 3, 2, 5, 4, 3, 2},
              "13a numbers");
    // Whitespace only: "2-3" is one token, so 2 unigrams and 1 bigram of 3 tokens match.
    check_row(bleu("3.5 1,000 2-3", {"3.5 1,000 2 - 3"}, MtTokenizer::none), {3, 5, 2, 1, 0, 0, 3, 2, 1, 0},
              "no tokenizer");
    // Entities become their characters, which the first rule then spaces out.
    check_row(bleu("a&amp;b", {"a & b"}, MtTokenizer::v13a), {3, 3, 3, 2, 1, 0, 3, 2, 1, 0}, "13a entities");
}

void test_bleu_several_references() {
    // "a" four times: at most twice in one reference (the second), "a a" once there. Reference
    // lengths 2 and 3 for a hypothesis of 4: 3 is the closest; the third stream has none.
    check_row(bleu("a a a a", {"a b", "a a c", nullptr}, pairperm::MtTokenizer::none), {4, 3, 2, 1, 0, 0, 4, 3, 2, 1},
              "several references");
    // Lengths 4 and 6 for a hypothesis of 5: the shorter.
    check_row(bleu("x x x x x", {"y y y y y y", "y y y y"}, pairperm::MtTokenizer::none), {5, 4, 0, 0, 0, 0, 5, 4, 3, 2},
              "closest length tie");
}

void test_chrf() {
    // Spaces removed: "abc" on both sides; no n-grams of order 4 and up in the reference, so
    // none counted in the hypothesis there either.
    check_row(chrf("ab c", "abc", 0), {3, 3, 3, 2, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}, "chrF");
    // chrF++: the words "ab", "c" against "abc" match nothing; the reference has no word bigram.
    check_row(chrf("ab c", "abc", 2),
              {3, 3, 3, 2, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 0, 0, 0, 0}, "chrF++");
    // A final punctuation mark leaves its word, else an initial one: "(hi", ")", "there", ","
    // against "hi", "there": one word matches, no bigram.
    const Row r = chrf("(hi) there,", "hi there", 2);
    check_row(Row(r.end() - 6, r.end()), {4, 2, 1, 3, 1, 0}, "chrF++ words");
    check_row(Row(r.begin(), r.begin() + 3), {10, 7, 7}, "chrF++ characters");
}

void test_refusals() {
    check_throws_invalid_argument([] { bleu("\xff", {"a"}, pairperm::MtTokenizer::v13a); }, "invalid UTF-8");
    check_throws_invalid_argument([] { bleu("\xed\xa0\x80", {"a"}, pairperm::MtTokenizer::v13a); }, "a surrogate");
    check_throws_invalid_argument([] { bleu("\xc0\xaf", {"a"}, pairperm::MtTokenizer::v13a); }, "an overlong form");
    check_throws_invalid_argument([] { bleu("a", {nullptr, nullptr}, pairperm::MtTokenizer::v13a); }, "no reference");
    check_throws_invalid_argument([] { chrf("a", "a", 3); }, "word order 3");
}

}  // namespace

int main() {
    test_bleu_13a();
    test_bleu_several_references();
    test_chrf();
    test_refusals();
    std::printf("%d checks, %d failures\n", checks, failures);
    return failures;
}

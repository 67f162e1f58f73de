// Bindings for the per-sentence MT statistics (pairperm/mt_statistics.hpp): lists of Python
// str in, int64 rows out.
#include "pybind.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "pairperm/mt_statistics.hpp"

namespace pairperm::bindings {

namespace {

// Each text's UTF-8 bytes, which CPython caches inside the str itself (for an ASCII str they
// are its data); `owners` keeps every str alive while the core reads them without the GIL, even
// if another thread empties the caller's lists meanwhile.
struct Texts {
    std::vector<py::object> owners;
    std::vector<MtText> texts;
};

void add_texts(const py::list& items, bool none_allowed, const std::string& what, Texts& out) {
    for (std::size_t i = 0; i < items.size(); ++i) {
        py::object item = items[i];
        if (item.is_none() && none_allowed) {
            out.texts.push_back(MtText{});
            continue;
        }
        if (!PyUnicode_Check(item.ptr()))
            throw py::type_error(what + " " + std::to_string(i) + " is not a str but " +
                                 std::string(py::str(py::type::of(item).attr("__name__"))));
        Py_ssize_t size = 0;
        const char* data = PyUnicode_AsUTF8AndSize(item.ptr(), &size);
        if (data == nullptr) {
            PyErr_Clear();
            throw py::value_error(what + " " + std::to_string(i) + " cannot be encoded as UTF-8 (a lone surrogate)");
        }
        out.texts.push_back(MtText{data, static_cast<std::size_t>(size)});
        out.owners.push_back(std::move(item));
    }
}

// The hypotheses, then each reference stream (the core's references[r * n + i]).
Texts read_texts(const py::list& hypotheses, const py::list& references, std::size_t& n, std::size_t& streams) {
    n = hypotheses.size();
    streams = references.size();
    Texts t;
    t.texts.reserve(n * (1 + streams));
    add_texts(hypotheses, false, "hypothesis", t);
    for (std::size_t r = 0; r < streams; ++r) {
        py::object stream = references[r];
        if (!PyList_Check(stream.ptr())) throw py::type_error("reference stream " + std::to_string(r) + " is not a list");
        const py::list refs = py::reinterpret_borrow<py::list>(stream);
        if (refs.size() != n)
            throw py::value_error("reference stream " + std::to_string(r) + " has " + std::to_string(refs.size()) +
                                  " segments, the hypotheses " + std::to_string(n));
        add_texts(refs, true, "reference (stream " + std::to_string(r) + ")", t);
        t.owners.push_back(std::move(stream));
    }
    return t;
}

MtTokenizer parse_tokenizer(const std::string& s) {
    if (s == "13a") return MtTokenizer::v13a;
    if (s == "none") return MtTokenizer::none;
    throw std::invalid_argument("tokenize must be '13a' or 'none', got '" + s + "'");
}

}  // namespace

void bind_mt(py::module_& m) {
    m.def(
        "bleu_statistics",
        [](const py::list& hypotheses, const py::list& references, const std::string& tokenize, unsigned n_threads) {
            const MtTokenizer tokenizer = parse_tokenizer(tokenize);
            std::size_t n = 0, streams = 0;
            const Texts t = read_texts(hypotheses, references, n, streams);
            py::array_t<std::int64_t> out({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(bleu_statistics_columns)});
            std::int64_t* o = out.mutable_data();
            const MtText* texts = t.texts.data();
            // The texts are owned by `t` until we return, and `out` is ours alone.
            without_gil([&] { bleu_statistics(texts, texts + n, n, streams, tokenizer, n_threads, o); });
            return out;
        },
        py::arg("hypotheses"), py::arg("references"), py::arg("tokenize") = "13a", py::arg("n_threads") = 0);
    m.def(
        "chrf_statistics",
        [](const py::list& hypotheses, const py::list& references, int word_order, unsigned n_threads) {
            if (word_order < 0 || word_order > chrf_max_word_order)
                throw std::invalid_argument("word_order must be 0 (chrF) to 2 (chrF++), got " + std::to_string(word_order));
            std::size_t n = 0, streams = 0;
            const Texts t = read_texts(hypotheses, references, n, streams);
            const auto columns = static_cast<py::ssize_t>(chrf_statistics_columns(word_order));
            py::array_t<std::int64_t> out({static_cast<py::ssize_t>(n), columns});
            std::int64_t* o = out.mutable_data();
            const MtText* texts = t.texts.data();
            // The texts are owned by `t` until we return, and `out` is ours alone.
            without_gil([&] { chrf_statistics(texts, texts + n, n, streams, word_order, n_threads, o); });
            return out;
        },
        py::arg("hypotheses"), py::arg("references"), py::arg("word_order") = 0, py::arg("n_threads") = 0);
}

}  // namespace pairperm::bindings

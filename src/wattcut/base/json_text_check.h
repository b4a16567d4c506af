// One linear pass over a JSON text, before it is parsed into a document, for what nlohmann's
// DOM parser does not say (or says too late):
//  * the first syntax error with its byte offset, a number beyond a double's range ("1e400")
//    included (the DOM parser throws that without a position);
//  * the first key given twice in one object, with its JSON path ("operations[3].name"): the
//    DOM parser keeps the last without a word;
//  * a top-level array longer than its bound (`element_limits`: "operations" -> 2^20), found
//    when its element past the bound starts, before the document is built;
//  * arrays and objects nested deeper than kJsonMaxDepth: nlohmann parses any depth, but its
//    dump, copy and comparison recurse, and 100,000 nested '[' overflow the stack. Every format
//    the project reads nests fewer than 10 levels.
// Why not nlohmann's parser callback: it made the DAG file's parse quadratic (2^17 operations:
// 21 s with a callback that only returns true, 0.4 s without); this pass is nlohmann's SAX
// parser, linear, with no document.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace wattcut {

// The deepest nesting of arrays and objects a JSON text may have.
inline constexpr int kJsonMaxDepth = 128;

struct JsonTextProblem {
  enum class Kind { kSyntax, kDuplicateKey, kTooManyElements, kTooDeep };
  Kind kind = Kind::kSyntax;
  size_t byte = 0;      // kSyntax: 0-based offset where the parser stopped
  std::string message;  // kSyntax: the parser's words ("[json.exception.parse_error.101] ...")
  // kSyntax: where the parser was ("unit_time_s", "" at the top); kDuplicateKey: the repeated
  // key's path; kTooManyElements: the array's key; kTooDeep: the value that goes one level too
  // deep ("data.result[0].values[0][0]...").
  std::string path;
  std::string key;    // kDuplicateKey: the key
  int64_t limit = 0;  // kTooManyElements, kTooDeep
};

// `element_limits`: top-level keys whose array may hold at most that many elements.
std::optional<JsonTextProblem> FindJsonTextProblem(std::string_view text,
                                                   const std::map<std::string, int64_t>& element_limits = {});

// For kTooDeep: "arrays and objects nested deeper than 128 levels (at PATH)", the path cut.
std::string JsonDepthMessage(const JsonTextProblem& problem);

// 1-based line and column of byte offset `byte` of `text`: "line 3, column 14".
std::string LineAndColumn(std::string_view text, size_t byte);

}  // namespace wattcut

// Test support: a small XML well-formedness check (tags balanced and properly nested,
// attributes quoted and not repeated, only the five predefined or numeric entities, a
// single root element). Enough to catch broken SVG output without an XML library.
#pragma once

#include <cctype>
#include <set>
#include <string>
#include <vector>

namespace wattcut::plot::testing {

// Empty when `text` is well-formed XML; otherwise what is wrong and at which offset.
inline std::string XmlProblem(const std::string& text) {
  std::vector<std::string> open;
  size_t i = 0;
  int roots = 0;
  auto fail = [&](const std::string& what) { return what + " at offset " + std::to_string(i); };
  auto is_name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' || c == '.';
  };
  auto check_entities = [&](size_t from, size_t to) -> std::string {
    for (size_t k = from; k < to; ++k) {
      if (text[k] == '<') return "raw '<' in text or attribute at offset " + std::to_string(k);
      if (text[k] != '&') continue;
      size_t semi = text.find(';', k);
      if (semi == std::string::npos || semi > to) return "unterminated entity at offset " + std::to_string(k);
      std::string name = text.substr(k + 1, semi - k - 1);
      static const std::set<std::string> kKnown = {"amp", "lt", "gt", "quot", "apos"};
      if (!kKnown.count(name) && !(name.size() > 1 && name[0] == '#')) {
        return "unknown entity '&" + name + ";' at offset " + std::to_string(k);
      }
    }
    return "";
  };
  while (i < text.size()) {
    if (text[i] != '<') {
      size_t next = text.find('<', i);
      if (next == std::string::npos) next = text.size();
      bool blank = text.find_first_not_of(" \t\r\n", i) >= next;
      if (!blank && open.empty()) return fail("text outside the root element");
      std::string e = check_entities(i, next);
      if (!e.empty()) return e;
      i = next;
      continue;
    }
    if (text.compare(i, 5, "<?xml") == 0) {
      size_t end = text.find("?>", i);
      if (end == std::string::npos || i != 0) return fail("bad XML declaration");
      i = end + 2;
      continue;
    }
    if (text.compare(i, 4, "<!--") == 0) {
      size_t end = text.find("-->", i);
      if (end == std::string::npos) return fail("unterminated comment");
      i = end + 3;
      continue;
    }
    bool closing = i + 1 < text.size() && text[i + 1] == '/';
    size_t j = i + (closing ? 2 : 1);
    size_t name_start = j;
    while (j < text.size() && is_name_char(text[j])) ++j;
    std::string name = text.substr(name_start, j - name_start);
    if (name.empty()) return fail("tag without a name");
    if (closing) {
      while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
      if (j >= text.size() || text[j] != '>') return fail("malformed closing tag </" + name);
      if (open.empty() || open.back() != name) return fail("closing </" + name + "> does not match");
      open.pop_back();
      i = j + 1;
      continue;
    }
    std::set<std::string> attributes;
    while (true) {
      while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
      if (j >= text.size()) return fail("unterminated tag <" + name);
      if (text[j] == '>' || text.compare(j, 2, "/>") == 0) break;
      size_t a = j;
      while (j < text.size() && is_name_char(text[j])) ++j;
      std::string attribute = text.substr(a, j - a);
      if (attribute.empty()) return fail("bad attribute in <" + name);
      if (!attributes.insert(attribute).second) return fail("repeated attribute " + attribute);
      if (j >= text.size() || text[j] != '=') return fail("attribute " + attribute + " without value");
      ++j;
      if (j >= text.size() || (text[j] != '"' && text[j] != '\'')) return fail("unquoted attribute " + attribute);
      char quote = text[j];
      size_t end = text.find(quote, j + 1);
      if (end == std::string::npos) return fail("unterminated attribute " + attribute);
      std::string e = check_entities(j + 1, end);
      if (!e.empty()) return e;
      j = end + 1;
    }
    if (open.empty()) {
      if (++roots > 1) return fail("second root element <" + name + ">");
    }
    if (text[j] == '>') {
      open.push_back(name);
      i = j + 1;
    } else {
      i = j + 2;
    }
  }
  if (!open.empty()) return "element <" + open.back() + "> is never closed";
  if (roots != 1) return "no root element";
  return "";
}

}  // namespace wattcut::plot::testing

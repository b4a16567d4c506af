#!/usr/bin/python3
"""scripts/check_code_size.py's own rules: a function's lines run from its body's opening brace to
its closing one; braces in comments and literals (raw strings too) do not count; a lambda counts in
the function it is written in; namespaces, classes and initialisers are no functions."""

import importlib.util
import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = importlib.util.spec_from_file_location("size", os.path.join(HERE, "..", "..", "scripts", "check_code_size.py"))
size = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(size)

SOURCE = r'''namespace a {
namespace {
const std::vector<int> kTable = {1, 2,
                                 3};
}  // namespace

// a comment with a brace {
int Short(int x) { return x + 1; }

std::string Longer(const Thing& t) const {
  const char* s = "}}}";
  const char c = '{';
  auto f = [](int y) {
    return y;
  };
  return R"json({"a": {}})json";
}

class Widget {
 public:
  int Inline() const {
    return 1;
  }
};

Widget::Widget(int n) : n_(n), m_{n} {
  Run(1'000);
}

extern "C" {
int CEntry(void) {
  return 0;
}
}
}  // namespace a
'''


class FunctionsOf(unittest.TestCase):
    def setUp(self):
        self.functions = {f.name: f for f in size.functions_of("x.cc", SOURCE)}

    def test_finds_each_function_and_nothing_else(self):
        self.assertEqual(sorted(self.functions), ["CEntry", "Inline", "Longer", "Short", "Widget::Widget"])

    def test_counts_from_the_opening_brace_to_the_closing_one(self):
        self.assertEqual(self.functions["Short"].lines, 1)
        self.assertEqual(self.functions["Longer"].lines, 8, "the lambda and the literals' braces count as lines only")
        self.assertEqual(self.functions["Inline"].lines, 3)
        self.assertEqual(self.functions["Widget::Widget"].lines, 3)
        self.assertEqual(self.functions["CEntry"].lines, 3)

    def test_literals_and_comments_are_blanked_but_lines_kept(self):
        blanked = size.blank_comments_and_literals(SOURCE)
        self.assertEqual(blanked.count("\n"), SOURCE.count("\n"))
        self.assertNotIn("}}}", blanked)
        self.assertNotIn("json", blanked)


if __name__ == "__main__":
    unittest.main()

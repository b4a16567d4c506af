#!/usr/bin/env python3
"""tests/docs/doc_blocks.py on small made-up docs: how a block's kind is read and refused, how a
console block splits into commands and output, and what output matches what the docs show."""

from __future__ import annotations

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import doc_blocks  # noqa: E402


def blocks_of(text: str) -> list[doc_blocks.Block]:
    with tempfile.TemporaryDirectory() as root:
        with open(os.path.join(root, "doc.md"), "w", encoding="utf-8") as f:
            f.write(text)
        return doc_blocks.read_blocks(root, "doc.md")


class Kinds(unittest.TestCase):
    def test_each_kind_is_read_with_its_line(self):
        blocks = blocks_of("# A doc\n\n```console\n$ wattcut --version\nwattcut 0.1.0\n```\n\n"
                           "* a list:\n\n  ```bash\n  # illustrative: needs Slurm\n  sbatch job.sh\n  ```\n"
                           "```usage\nwattcut serve --data-dir DIR\n```\n")
        self.assertEqual([(b.kind, b.line) for b in blocks], [("console", 4), ("bash", 11), ("usage", 15)])
        self.assertEqual(blocks[1].illustrative, "needs Slurm")
        self.assertEqual(blocks[1].text, "# illustrative: needs Slurm\nsbatch job.sh")  # the list's indent taken off

    def test_a_block_without_a_kind_is_refused_with_its_line(self):
        with self.assertRaisesRegex(doc_blocks.DocError, r"doc.md:3: the block's kind is 'missing'"):
            blocks_of("text\n\n```\nwattcut frontier\n```\n")
        with self.assertRaisesRegex(doc_blocks.DocError, r"doc.md:1: the block's kind is 'sh'"):
            blocks_of("```sh\nls\n```\n")

    def test_a_block_never_closed_is_refused(self):
        with self.assertRaisesRegex(doc_blocks.DocError, "doc.md:2: a fenced block that is never closed"):
            blocks_of("\n```bash\nls\n")

    def test_a_command_cannot_hide_in_a_data_block(self):
        with self.assertRaisesRegex(doc_blocks.DocError, "doc.md:2: a text block that starts a line with a command"):
            blocks_of("```text\n$ wattcut frontier --out x\n```\n")

    def test_a_usage_block_needs_a_placeholder(self):
        with self.assertRaisesRegex(doc_blocks.DocError, "a usage block without a placeholder"):
            blocks_of("```usage\nwattcut frontier --gpu-model a100-sxm --out out/x\n```\n")

    def test_only_runnable_blocks_are_illustrative(self):
        with self.assertRaisesRegex(doc_blocks.DocError, "only console, bash, python and pycon blocks can be illustrative"):
            blocks_of("```json\n# illustrative: a file\n{}\n```\n")

    def test_a_console_block_starts_with_a_command(self):
        with self.assertRaisesRegex(doc_blocks.DocError, r"a console block starts with its first command"):
            blocks_of("```console\nwattcut frontier\n```\n")
        with self.assertRaisesRegex(doc_blocks.DocError, r"a pycon block starts with its first statement"):
            blocks_of("```pycon\nimport wattcut\n```\n")


class Commands(unittest.TestCase):
    def test_backslashes_and_open_quotes_carry_a_command_on(self):
        (block,) = blocks_of("```console\n$ wattcut frontier \\\n    --out x\nfrontier: 3 points\n"
                             "$ python3 -c 'print(1)\nprint(2)'\n1\n2\n$ true\n```\n")
        commands = doc_blocks.console_commands(block)
        self.assertEqual([(c.offset, c.text, c.shown) for c in commands],
                         [(0, "wattcut frontier \\\n    --out x", ["frontier: 3 points"]),
                          (3, "python3 -c 'print(1)\nprint(2)'", ["1", "2"]), (7, "true", [])])

    def test_a_command_that_never_ends_is_refused(self):
        (block,) = blocks_of("```console\n$ echo 'open\n```\n")
        with self.assertRaisesRegex(doc_blocks.DocError, "doc.md:2: the command never ends"):
            doc_blocks.console_commands(block)


class Output(unittest.TestCase):
    def test_exact_lines_match_and_a_changed_number_does_not(self):
        self.assertEqual(doc_blocks.match_output(["T_min  2.8180 s"], ["T_min  2.8180 s  "]), "")
        self.assertEqual(doc_blocks.match_output(["T_min  2.8180 s"], ["T_min  2.8181 s"]),
                         "the docs show 'T_min  2.8180 s'; it printed 'T_min  2.8181 s' (its line 1)")

    def test_three_dots_in_a_line_stand_for_any_text(self):
        self.assertEqual(doc_blocks.match_output(["files in /tmp/try-..."], ["files in /tmp/try-Ab12"]), "")
        self.assertEqual(doc_blocks.match_output(["step ...: stage 3 runs ... MHz"], ["step 27: stage 3 runs 1290-1410 MHz"]),
                         "")
        self.assertNotEqual(doc_blocks.match_output(["step ...: stage 3"], ["step 27: stage 2"]), "")
        # Everything else is literal: regular expression characters are not patterns.
        self.assertNotEqual(doc_blocks.match_output(["a.c (x)"], ["abc (x)"]), "")

    def test_a_line_of_three_dots_stands_for_any_lines(self):
        printed = ["head", "one", "two", "tail"]
        self.assertEqual(doc_blocks.match_output(["head", "...", "tail"], printed), "")
        self.assertEqual(doc_blocks.match_output(["head", "one", "two", "...", "tail"], printed), "")  # none too
        self.assertEqual(doc_blocks.match_output(["...", "two", "..."], printed), "")
        self.assertEqual(doc_blocks.match_output(["head", "...", "three"], printed),
                         "the docs show 'three', but no line it printed from its line 2 on is that")
        self.assertEqual(doc_blocks.match_output(["head", "one", "two", "tail", "...", "end"], printed),
                         "the docs show 'end', but it printed nothing more")

    def test_output_beyond_what_the_docs_show_fails_without_a_final_gap(self):
        self.assertEqual(doc_blocks.match_output(["head"], ["head", "more"]),
                         "it printed more than the docs show, from its line 2: 'more'")
        self.assertEqual(doc_blocks.match_output(["head", "..."], ["head", "more"]), "")
        self.assertEqual(doc_blocks.match_output([], ["", ""]), "")  # blank lines at the end do not count

    def test_the_first_difference_is_named_after_backtracking(self):
        # The gap first tries to end at the first 'x', which fails later; the match found ends at the second.
        self.assertEqual(doc_blocks.match_output(["...", "x", "y"], ["x", "z", "x", "y"]), "")
        self.assertEqual(doc_blocks.match_output(["a", "b"], ["a", "c"]), "the docs show 'b'; it printed 'c' (its line 2)")


if __name__ == "__main__":
    unittest.main()

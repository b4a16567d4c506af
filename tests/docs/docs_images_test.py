#!/usr/bin/env python3
"""scripts/docs_images.py's sketch of an SVG: what a chart draws, numbers aside, the comparison the
docs images check makes for the pictures of slow runs."""

from __future__ import annotations

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))

import docs_images  # noqa: E402

CHART = """<svg xmlns="http://www.w3.org/2000/svg" width="800" height="480">
<polyline points="{points}" fill="none" stroke="#2ca02c" stroke-width="2"/>
<text x="{x}" y="52" font-size="10" fill="#555555"{halo}>P50 SLO {slo} %</text>
</svg>"""


def chart(points="72,448 100,300", x="264.38", slo="5", halo="", colour="#2ca02c"):
    return CHART.format(points=points, x=x, slo=slo, halo=halo).replace("#2ca02c", colour)


class Sketch(unittest.TestCase):
    def test_other_data_draws_the_same_sketch(self):
        self.assertEqual(docs_images.sketch_of(chart()),
                         docs_images.sketch_of(chart(points="72,448 80,400 90,350 100,300", x="12", slo="50")))

    def test_a_change_to_how_it_is_drawn_is_seen(self):
        base = docs_images.sketch_of(chart())
        self.assertNotEqual(base, docs_images.sketch_of(chart(halo=' stroke="white" paint-order="stroke"')))
        self.assertNotEqual(base, docs_images.sketch_of(chart(colour="#2ca03c")))  # a colour's digits are kept
        self.assertNotEqual(base, docs_images.sketch_of(chart().replace("P50 SLO", "P99 SLO")))  # so are a name's


if __name__ == "__main__":
    unittest.main()

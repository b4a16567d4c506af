// The two rules of Prometheus's text exposition format that every exporter here shares (the
// planning server's /metrics, the node agent's, the row controller's): how a sample's value is
// written and how a label's value is quoted. Written once, so a job id or an error message is
// quoted alike by all three and a scraper reads each the same way.
#pragma once

#include <string>

namespace wattcut {

// A sample value: the shortest text that reads back as the same double (GeneralText), and the
// format's "NaN", "+Inf" and "-Inf" (printf's "nan" and "inf" are not valid there).
std::string PrometheusValue(double value);

// A label value, without its quotes: made printable first (PrintableText, at most 256
// characters: no control byte, valid UTF-8, which a scraper may otherwise reject), then the
// format's three escapes, \\, \" and \n.
std::string PrometheusLabelValue(const std::string& value);

}  // namespace wattcut

#include "wattcut/polca/load_phase_times.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "wattcut/polca/inference_power_model.h"

namespace wattcut::polca {
namespace {

// Load that needs up to this much more time than the window has is within the approximation (the
// decode batch changes inside a window; scrapes jitter); beyond it the window is overfull.
constexpr double kOverfullSlack = 0.10;
// The least share of a window a prefill in progress at one of its scrapes is given there.
constexpr double kMinPieceShare = 0.02;

double ClockOf(const CalibrationWindow& w, const PolcaConfig& config) {
  return std::isnan(w.freq_mhz) ? config.gpu.max_freq_mhz
                                : std::clamp(w.freq_mhz, config.gpu.min_freq_mhz, config.gpu.max_freq_mhz);
}

bool Adjacent(const CalibrationWindow& a, const CalibrationWindow& b) { return std::abs(b.start_s - a.end_s) < 1e-6; }

// A prefill in progress at one or more scrapes: it began in window `first` and ended in `last`.
struct Straddler {
  size_t first = 0, last = 0;
  int requests = 1;  // batched in it
  double tokens = 0;
  std::vector<std::pair<size_t, size_t>> pieces;  // (window, index in its prefill pieces)
};

// The prefills that begin and end inside window w, and their tokens each, given the tokens and
// requests of the straddler ending in it (none: tokens < 0). See the header for the batching rule.
std::pair<int, double> InsidePrefills(const CalibrationWindow& w, double straddler_tokens, int straddler_requests,
                                      const PolcaConfig& config) {
  const int requests = static_cast<int>(std::lround(w.prefilled_requests));
  const int others = requests - (straddler_tokens >= 0 ? straddler_requests : 0);
  if (others <= 0) return {0, 0};
  const double tokens = std::max(0.0, w.prompt_tokens - std::max(0.0, straddler_tokens));
  int prefills = others;
  if (w.waiting_start > 0) {
    prefills = std::clamp(static_cast<int>(std::ceil(tokens / config.service.max_prefill_tokens - 1e-9)), 1, others);
  }
  return {prefills, tokens / prefills};
}

// The decode batch that makes the window's decode tokens fill its decode time: decode_s =
// tokens / b x (base + per_request x b) x slowdown, solved for b, within the batches at its ends.
void SolveDecodeBatch(const CalibrationWindow& w, const PolcaConfig& config, WindowPhaseTimes& p) {
  const double decode_tokens = std::max(0.0, w.generated_tokens - w.prefilled_requests);
  if (decode_tokens <= 0 || p.decode_s <= 0) return;
  const InferencePowerModel model(config);
  const double slow = model.TokenSlowdown(ClockOf(w, config));
  const double denom = p.decode_s - decode_tokens * config.service.token_iteration_s_per_request * slow;
  if (denom <= 0) return;
  const double b = decode_tokens * config.service.token_iteration_s_base * slow / denom;
  const double lo = std::max(1.0, std::min(w.decode_batch_start, w.decode_batch_end));
  const double hi = std::max({1.0, w.decode_batch_start, w.decode_batch_end});
  p.decode_batch = std::clamp(b, lo, hi);
}

// One allocation pass: `straddler_tokens[q]` (NaN: unknown) are the tokens of the straddler ending
// in window q; unknown ones get the window's mean prompt tokens per request. `prompt_sd` is the
// spread of one request's prompt tokens.
std::vector<WindowPhaseTimes> Allocate(const std::vector<CalibrationWindow>& windows, const PolcaConfig& config,
                                       const std::vector<double>& straddler_tokens, double prompt_sd,
                                       std::vector<Straddler>& straddlers) {
  const InferencePowerModel model(config);
  const size_t n = windows.size();
  std::vector<WindowPhaseTimes> out(n);
  std::vector<double> ending_tokens(n, -1);  // tokens of the straddler ending in each window
  std::vector<int> ending_requests(n, 0);    // and the requests batched in it
  straddlers.clear();

  // Straddling prefills: a run of scrapes with a prefill in progress, from window j's end to the
  // window q where it ends (the first with a first token).
  for (size_t j = 0; j < n; ++j) {
    if (!windows[j].prefill_at_end()) continue;
    // The same prefill as at the window's start (none ended in it): not a run's first scrape.
    if (j > 0 && windows[j].prefill_at_start() && windows[j].prefilled_requests <= 0 &&
        Adjacent(windows[j - 1], windows[j])) {
      continue;
    }
    size_t q = j + 1;
    while (q < n && Adjacent(windows[q - 1], windows[q]) && windows[q].prefilled_requests <= 0) ++q;
    if (q >= n || !Adjacent(windows[q - 1], windows[q])) continue;  // its end is not in the data
    // The requests in it: those in a prefill at its first scrape (no more than end in window q).
    const int requests = std::clamp(windows[j].prefilling_end, 1,
                                    std::max(1, static_cast<int>(std::lround(windows[q].prefilled_requests))));
    const bool own_tokens = std::lround(windows[q].prefilled_requests) == requests;
    double tokens = straddler_tokens[q];
    if (std::isnan(tokens)) tokens = windows[q].prompt_tokens * requests / windows[q].prefilled_requests;
    const double d = model.PromptSeconds(tokens) * model.PromptSlowdown(ClockOf(windows[q], config));
    const double first_scrape = windows[j].end_s, last_scrape = windows[q].start_s;
    // It began in window j and ended in window q: end c in [last_scrape, q.end], start c - d in
    // [j.start, first_scrape].
    const double lo = std::max(last_scrape, windows[j].start_s + d);
    const double hi = std::min(windows[q].end_s, first_scrape + d);
    // It was in progress at both scrapes, so it has a piece in window j and in window q however
    // short the timing says it is (a busy window's pieces are then scaled to what decode leaves).
    const double sliver_j = kMinPieceShare * windows[j].length_s(), sliver_q = kMinPieceShare * windows[q].length_s();
    const double c = std::max(last_scrape + sliver_q,
                              lo <= hi ? (lo + hi) / 2 : std::clamp((lo + hi) / 2, last_scrape, windows[q].end_s));
    const double start = std::max(windows[j].start_s, std::min(c - d, first_scrape - sliver_j));
    if (lo > hi) out[q].overfull = true;  // the timing cannot explain the run: keep it within the windows
    Straddler s{j, q, requests, tokens, {}};
    for (size_t k = j; k <= q; ++k) {
      const double overlap = std::min(c, windows[k].end_s) - std::max(start, windows[k].start_s);
      if (overlap > 0) {
        s.pieces.push_back({k, out[k].prefill.size()});
        out[k].prefill.push_back({overlap, tokens, own_tokens, false});
      }
    }
    ending_tokens[q] = tokens;
    ending_requests[q] = requests;
    straddlers.push_back(std::move(s));
  }

  for (size_t k = 0; k < n; ++k) {
    const CalibrationWindow& w = windows[k];
    WindowPhaseTimes& p = out[k];
    const double f = ClockOf(w, config);
    const double length = w.length_s();
    const auto [inside, tokens] = InsidePrefills(w, ending_tokens[k], ending_requests[k], config);
    if (inside > 0) {
      const bool known = inside == 1 && ending_tokens[k] < 0 && std::lround(w.prefilled_requests) == 1;
      // Unbatched requests of one window differ in size: an equal split of their tokens would
      // understate the energy of the larger ones (prefill energy grows faster than its tokens), so
      // they are spread by the requests' own spread given their sum: +-sd sqrt((m - 1) / m).
      const bool spread = inside > 1 && w.waiting_start <= 0;
      const double delta = spread ? std::min(tokens - 1, prompt_sd * std::sqrt((inside - 1.0) / inside)) : 0.0;
      for (int i = 0; i < inside; ++i) {
        const double sign = inside % 2 == 1 && i == inside - 1 ? 0.0 : (i % 2 == 0 ? 1.0 : -1.0);
        const double n_i = tokens + sign * std::max(0.0, delta);
        p.prefill.push_back({model.PromptSeconds(n_i) * model.PromptSlowdown(f), n_i, known, true});
      }
    }
    double prefill_s = 0;
    for (const PrefillPiece& piece : p.prefill) prefill_s += piece.seconds;
    const double decode_tokens = std::max(0.0, w.generated_tokens - w.prefilled_requests);
    p.decode_batch = std::max(1.0, (w.decode_batch_start + w.decode_batch_end) / 2);
    if (decode_tokens > 0) {
      const double iterations = decode_tokens / p.decode_batch;
      const double per_iteration =
          config.service.token_iteration_s_base + config.service.token_iteration_s_per_request * p.decode_batch;
      p.decode_s = iterations * per_iteration * model.TokenSlowdown(f);
    }
    const bool busy_at_start = w.decode_batch_start > 0 || w.prefill_at_start() || w.waiting_start > 0;
    const bool busy_at_end = w.decode_batch_end > 0 || w.prefill_at_end() || w.waiting_end > 0;
    double whole_s = 0;
    int partial = 0;
    for (const PrefillPiece& piece : p.prefill) {
      if (piece.whole) {
        whole_s += piece.seconds;
      } else {
        ++partial;
      }
    }
    p.times_known = partial == 0 || (busy_at_start && busy_at_end && partial <= 1);
    if (busy_at_start && busy_at_end) {
      // Busy throughout, no idle time. Whole prefills last what the timing says (their tokens are
      // known); a prefill in progress at a scrape takes what they and decode leave; with none, decode
      // takes the rest, and the batch is the one that makes its tokens fill that time.
      if (whole_s > length) {
        for (PrefillPiece& piece : p.prefill) piece.seconds *= length / whole_s;
        whole_s = length;
        p.overfull = true;
      }
      if (partial == 0) {
        if (p.decode_s > (length - whole_s) * (1 + kOverfullSlack) + 0.01) p.overfull = true;
        p.decode_s = length - whole_s;
      } else {
        if (p.decode_s > (length - whole_s) * (1 + kOverfullSlack)) p.overfull = true;
        p.decode_s = std::min(p.decode_s, length - whole_s);
        const double rest = length - whole_s - p.decode_s;
        double partial_s = prefill_s - whole_s;
        for (PrefillPiece& piece : p.prefill) {
          if (!piece.whole) piece.seconds = partial_s > 0 ? piece.seconds * rest / partial_s : rest / partial;
        }
      }
      SolveDecodeBatch(w, config, p);
      p.idle_s = 0;
      continue;
    }
    if (prefill_s > length) {
      for (PrefillPiece& piece : p.prefill) piece.seconds *= length / prefill_s;
      prefill_s = length;
      p.overfull = true;
    }
    if (prefill_s + p.decode_s > length) {
      if (prefill_s + p.decode_s > length * (1 + kOverfullSlack)) p.overfull = true;
      p.decode_s = length - prefill_s;
    }
    p.idle_s = std::max(0.0, length - prefill_s - p.decode_s);
  }
  return out;
}

}  // namespace

std::vector<WindowPhaseTimes> ReconstructPhaseTimes(const std::vector<CalibrationWindow>& windows,
                                                    const PolcaConfig& config) {
  const InferencePowerModel model(config);
  const size_t n = windows.size();
  std::vector<double> tokens(n, std::numeric_limits<double>::quiet_NaN());
  std::vector<Straddler> straddlers;
  // The spread of a request's prompt tokens, from the windows where one request alone was prefilled.
  double singles = 0, sum = 0, sum2 = 0;
  for (const CalibrationWindow& w : windows) {
    if (std::lround(w.prefilled_requests) != 1 || w.prefill_at_start() || w.prompt_tokens <= 0) continue;
    singles += 1;
    sum += w.prompt_tokens;
    sum2 += w.prompt_tokens * w.prompt_tokens;
  }
  const double prompt_sd = singles > 1 ? std::sqrt(std::max(0.0, (sum2 - sum * sum / singles) / (singles - 1))) : 0.0;
  std::vector<WindowPhaseTimes> first = Allocate(windows, config, tokens, prompt_sd, straddlers);
  // A straddler's tokens from its duration: the prefill time it had before its last window (known
  // where those windows were busy) plus its share of the last window's prefill time.
  for (const Straddler& s : straddlers) {
    const CalibrationWindow& last = windows[s.last];
    if (std::lround(last.prefilled_requests) <= s.requests) continue;  // it holds all of the window's tokens
    double seconds = 0;
    for (const auto& [k, i] : s.pieces) {
      if (k == s.last) {
        double pieces_s = 0;
        for (const PrefillPiece& piece : first[k].prefill) pieces_s += piece.seconds;
        seconds += pieces_s / static_cast<double>(first[k].prefill.size());
      } else {
        seconds += first[k].prefill[i].seconds;
      }
    }
    const double at_max_clock = seconds / model.PromptSlowdown(ClockOf(last, config));
    const double from_time = (at_max_clock - config.service.prompt_s_base) / config.service.prompt_s_per_token;
    tokens[s.last] = std::clamp(from_time, 1.0, last.prompt_tokens);
  }
  std::vector<WindowPhaseTimes> out = Allocate(windows, config, tokens, prompt_sd, straddlers);
  // A straddler whose tokens are its own lasts what the timing says: where its pieces in busy
  // windows add up to more or less (their decode time came from the tokens at an estimated batch),
  // its first and last windows' decode time takes the difference, half each.
  auto busy = [&](size_t k) {
    const CalibrationWindow& w = windows[k];
    return (w.decode_batch_start > 0 || w.prefill_at_start() || w.waiting_start > 0) &&
           (w.decode_batch_end > 0 || w.prefill_at_end() || w.waiting_end > 0);
  };
  for (const Straddler& s : straddlers) {
    if (std::lround(windows[s.last].prefilled_requests) != s.requests || s.pieces.size() < 2) continue;
    bool ok = true;
    double total = 0;
    for (const auto& [k, i] : s.pieces) {
      ok = ok && busy(k) && out[k].times_known;
      total += out[k].prefill[i].seconds;
    }
    if (!ok) continue;
    const double d = model.PromptSeconds(s.tokens) * model.PromptSlowdown(ClockOf(windows[s.last], config));
    const double excess = total - d;
    for (const auto& end : {s.pieces.front(), s.pieces.back()}) {
      const auto [k, i] = end;
      PrefillPiece& piece = out[k].prefill[i];
      const double change = std::clamp(excess / 2, piece.seconds - windows[k].length_s(), piece.seconds);
      if (out[k].decode_s + change < 0) continue;
      piece.seconds -= change;
      out[k].decode_s += change;
      SolveDecodeBatch(windows[k], config, out[k]);
    }
  }
  return out;
}

}  // namespace wattcut::polca

// How long a server spent in each phase during each calibration window, reconstructed from its
// serving load (calibration_windows.h) and the served model's timing (the config's service.*
// and compute fractions): the model side of `polca calibrate`'s fit (power_calibration.h).
//
//  * Prefills: the requests whose first token came in a window were prefilled there. With no
//    queue (nothing waiting at the window's start) each had its own prefill; with a queue they
//    were batched, as a continuous-batching scheduler batches waiting requests: the fewest
//    prefills of at most service.max_prefill_tokens that hold the window's prompt tokens. A
//    prefill lasts (prompt_s_base + prompt_s_per_token x tokens) x the prompt slowdown at the
//    window's clock. Unbatched requests of one window share its tokens spread by the requests'
//    own spread (measured where one request was alone in a window), not equally: a prefill's
//    energy grows faster than its tokens.
//  * A prefill in progress at scrapes (calibration_windows.h sees it) ends in the first later
//    window with a first token: it is the first of that window's prefills and it covers every
//    scrape of its run. It holds the requests in a prefill at its first scrape (a batched
//    prefill holds several); where they are all the window's first tokens, the window's tokens
//    are its own. Otherwise its tokens come from its duration (the time it had before its last
//    window plus a share of that window's prefill time); where it ends inside its feasible range
//    is put in the middle of that range, the expected place.
//  * Decode: the window's generated tokens less its first tokens, at the mean decode batch of its
//    two ends, one token per request per iteration of (token_iteration_s_base +
//    token_iteration_s_per_request x batch) x the token slowdown.
//  * A window busy at both ends (something decoding, in prefill or waiting at each scrape) has no
//    idle time. Its whole prefills last what the timing says; a prefill in progress at a scrape
//    takes what they and decode leave; with none, decode takes the rest, and the decode batch is
//    the one that makes its tokens fill that time. A straddler whose tokens are its own then lasts
//    what its tokens say: its first and last windows' decode time takes the difference.
//  * Idle: the rest. A window whose load needs over 10 % more time than it has is
//    `overfull`: many of them mean the config's timing is not the served model's.
//
// `times_known` and `tokens_known` say where the reconstruction is determined by the load rather
// than placed or split by expectation; the fit uses only those windows.
#pragma once

#include <vector>

#include "wattcut/polca/calibration_windows.h"
#include "wattcut/polca/polca_config.h"

namespace wattcut::polca {

struct PrefillPiece {
  double seconds = 0;  // of this prefill inside the window
  double tokens = 0;   // the prefill's prompt tokens
  // The tokens are the prefill's own (the only prefill ending in its window), not a share of
  // several prefills' tokens.
  bool tokens_known = true;
  // The whole prefill lies in the window (its time is the timing's, not a guess at where it fell).
  bool whole = true;
};

struct WindowPhaseTimes {
  std::vector<PrefillPiece> prefill;
  double decode_s = 0;
  double decode_batch = 0;  // mean requests per decode iteration
  double idle_s = 0;
  bool overfull = false;
  // The phase times are determined by the load, not placed by expectation: every prefill lies
  // inside the window, or the window is busy throughout with one prefill piece (it takes what
  // decode leaves).
  bool times_known = true;
  // Every piece's tokens are known (PrefillPiece::tokens_known).
  bool tokens_known() const {
    for (const PrefillPiece& p : prefill) {
      if (!p.tokens_known) return false;
    }
    return true;
  }
};

// One entry per window, in the same order.
std::vector<WindowPhaseTimes> ReconstructPhaseTimes(const std::vector<CalibrationWindow>& windows,
                                                    const PolcaConfig& config);

}  // namespace wattcut::polca

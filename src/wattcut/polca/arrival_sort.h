// Sorting a block of arrivals into ArrivesBefore order in time linear in its size: a bucket
// pass on the arrival time, then each bucket (a handful of arrivals) sorted on its own. The order
// is ArrivesBefore's, a total order, so the result is the one std::sort gives; only the cost
// changes (a block of a 2,560-server row holds millions of arrivals, and sorting them was a
// log factor in servers on every simulated hour).
#pragma once

#include <vector>

#include "wattcut/polca/arrival_source.h"

namespace wattcut::polca {

// `scratch` is working space, kept by the caller so a block's worth is allocated once per run.
void SortArrivals(ArrivalBlock& arrivals, ArrivalBlock& scratch);

}  // namespace wattcut::polca

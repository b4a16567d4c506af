// wattcut-freq-setter: the frequency watchdog process started by StartWatchdogFrequencySetter.
// Not meant to be run by hand.
#include "wattcut/runtime/watchdog_child.h"

int main(int argc, char** argv) { return wattcut::watchdog::RunWatchdog(argc, argv); }

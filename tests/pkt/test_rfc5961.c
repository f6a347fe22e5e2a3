#include "tests/pkt/harness.h"
int main(void) { return 0; }

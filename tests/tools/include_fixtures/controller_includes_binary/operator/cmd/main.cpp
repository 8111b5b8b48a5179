#include "cmd/operator_flags.h"
#include "ipujob/controller.h"

int main() { return run(OperatorFlags{}); }

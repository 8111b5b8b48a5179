// The table goes to RESULT.md next to the JSON (an output, listed in tools/cited-docs.ignore).
const char* kTable = ".md";

// The source of wattcut_test_precompiled_headers (cmake/WattcutModule.cmake): the executable only
// owns the tests' precompiled header; GoogleTest's main runs no test in it.

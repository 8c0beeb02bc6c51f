// File input for the host drivers (host_*.cpp) that run the CUDA kernels as C++ on the CPU.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// The bytes of `path` (exits with status 2 if it cannot be read), followed by 16 zero
// bytes so that an empty array still gets a valid pointer.
static std::vector<char> slurp(const std::string& path) {
    std::vector<char> v;
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) { std::perror(path.c_str()); std::exit(2); }
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) v.insert(v.end(), buf, buf + n);
    std::fclose(f);
    v.resize(v.size() + 16, 0);
    return v;
}

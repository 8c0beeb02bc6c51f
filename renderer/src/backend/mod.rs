//! Render backends: the CPU (rayon) backend; the CUDA backend comes in issue 4.

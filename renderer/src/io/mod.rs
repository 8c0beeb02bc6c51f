//! Image output: OpenEXR (linear float) and PNG (sRGB 8-bit), by file extension.

//! Reading the image formats Mitsuba scenes use besides PNG, JPEG and EXR, from
//! files written byte by byte here from the format specifications: a 1×2 image
//! whose top pixel is (255, 128, 0) and bottom pixel (0, 64, 255), so the tests
//! see the channel order, the row order and the sRGB decoding.

use super::*;

const TOP: [u8; 3] = [255, 128, 0];
const BOTTOM: [u8; 3] = [0, 64, 255];

fn write(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let dir = crate::textures::image_file::tests::scratch("image_formats");
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// The decoded top and bottom pixels must be the sRGB-decoded bytes.
fn check_8bit(path: &Path) {
    let img = read_image(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        (img.width, img.height, img.channels),
        (1, 2, 3),
        "{}",
        path.display()
    );
    for (row, px) in [TOP, BOTTOM].iter().enumerate() {
        for c in 0..3 {
            let want = srgb_to_linear(px[c] as f32 / 255.0);
            let got = img.data[row * 3 + c];
            assert!(
                (got - want).abs() < 1e-6,
                "{}: row {row} channel {c}: {got} vs {want}",
                path.display()
            );
        }
    }
}

fn le16(v: u16) -> [u8; 2] {
    v.to_le_bytes()
}

fn le32(v: u32) -> [u8; 4] {
    v.to_le_bytes()
}

#[test]
fn bmp_24_bit_bottom_up() {
    // BITMAPFILEHEADER (14 bytes) + BITMAPINFOHEADER (40) + rows of 4 bytes (BGR +
    // padding), the bottom row first (positive height).
    let mut b = Vec::new();
    b.extend(b"BM");
    b.extend(le32(14 + 40 + 8));
    b.extend(le32(0));
    b.extend(le32(14 + 40));
    b.extend(le32(40));
    b.extend(le32(1)); // width
    b.extend(le32(2)); // height
    b.extend(le16(1));
    b.extend(le16(24));
    b.extend(le32(0)); // BI_RGB
    b.extend(le32(8));
    b.extend(le32(2835));
    b.extend(le32(2835));
    b.extend(le32(0));
    b.extend(le32(0));
    for px in [BOTTOM, TOP] {
        b.extend([px[2], px[1], px[0], 0]);
    }
    check_8bit(&write("t.bmp", &b));
}

#[test]
fn tga_uncompressed_both_origins() {
    // 18-byte header, image type 2 (true colour), 24 bits, BGR pixels; descriptor
    // bit 5 set = first row is the top one.
    for (top_first, name) in [(true, "top.tga"), (false, "bottom.tga")] {
        let mut b = vec![0, 0, 2, 0, 0, 0, 0, 0];
        b.extend(le16(0));
        b.extend(le16(0));
        b.extend(le16(1));
        b.extend(le16(2));
        b.push(24);
        b.push(if top_first { 0x20 } else { 0 });
        let rows = if top_first {
            [TOP, BOTTOM]
        } else {
            [BOTTOM, TOP]
        };
        for px in rows {
            b.extend([px[2], px[1], px[0]]);
        }
        check_8bit(&write(name, &b));
    }
}

#[test]
fn tga_run_length_encoded() {
    // image type 10: packets of a header byte (bit 7: a run; low bits: count - 1) and
    // one pixel for a run or `count` pixels for a raw packet: here a raw packet with
    // the top pixel, then a run of the bottom one.
    let mut b = vec![0, 0, 10, 0, 0, 0, 0, 0];
    b.extend(le16(0));
    b.extend(le16(0));
    b.extend(le16(1));
    b.extend(le16(2));
    b.push(24);
    b.push(0x20);
    b.push(0x00);
    b.extend([TOP[2], TOP[1], TOP[0]]);
    b.push(0x80);
    b.extend([BOTTOM[2], BOTTOM[1], BOTTOM[0]]);
    check_8bit(&write("rle.tga", &b));
}

#[test]
fn ppm_binary() {
    let mut b = b"P6\n1 2\n255\n".to_vec();
    b.extend(TOP);
    b.extend(BOTTOM);
    check_8bit(&write("t.ppm", &b));
}

#[test]
fn radiance_hdr_is_linear() {
    // Flat (not run-length encoded) RGBE: value = mantissa * 2^(exponent - 136).
    // Top (64, 32, 128) * 2^(130-136) = (1, 0.5, 2); bottom (4, 0, 128) * 2^(132-136)
    // = (0.25, 0, 8).
    let mut b = b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 2 +X 1\n".to_vec();
    b.extend([64, 32, 128, 130]);
    b.extend([4, 0, 128, 132]);
    let path = write("t.hdr", &b);
    let img = read_image(&path).unwrap();
    assert_eq!((img.width, img.height, img.channels), (1, 2, 3));
    assert_eq!(img.data, [1.0, 0.5, 2.0, 0.25, 0.0, 8.0]);
}

//! Reading the QR codes the server draws: [`decode_svg`].

/// Reads the QR code in an SVG of the `qrcode` crate: a white square and one black path of
/// rectangles `M{x} {y}h{w}v{h}H{x}V{y}`, painted into a greyscale picture and read with `rqrr`.
pub fn decode_svg(svg: &str) -> String {
    let number = |after: &str| -> usize {
        let at = svg
            .find(after)
            .unwrap_or_else(|| panic!("no {after} in {svg}"))
            + after.len();
        svg[at..].split('"').next().unwrap().parse().unwrap()
    };
    let (width, height) = (number("width=\""), number("height=\""));
    assert!(width >= 256 && width == height, "{width}×{height}");
    let path = svg
        .split(" d=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the modules' path");
    let mut dark = vec![false; width * height];
    for rect in path.split('M').filter(|r| !r.is_empty()) {
        // `{x} {y}h{w}v{h}H{x}V{y}`
        let numbers: Vec<usize> = rect
            .split(|c: char| !c.is_ascii_digit())
            .filter(|n| !n.is_empty())
            .map(|n| n.parse().unwrap())
            .collect();
        let [x, y, w, h, ..] = numbers[..] else {
            panic!("a rectangle: {rect}");
        };
        for row in y..y + h {
            for col in x..x + w {
                dark[row * width + col] = true;
            }
        }
    }
    let mut picture = rqrr::PreparedImage::prepare_from_greyscale(width, height, |x, y| {
        if dark[y * width + x] { 0 } else { 255 }
    });
    let grids = picture.detect_grids();
    assert_eq!(grids.len(), 1, "one QR code in the picture");
    let (_, content) = grids[0].decode().expect("the QR code reads");
    content
}

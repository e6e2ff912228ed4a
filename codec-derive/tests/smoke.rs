use codec_core::{MessageCodec, from_slice, to_vec};
use serde::{Deserialize, Serialize};

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Point {
    x: i32,
    y: Option<String>,
    tags: Vec<u8>,
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
enum Shape {
    Empty,
    Circle(f64),
    Rect(u8, u8),
    Poly { points: Vec<Point> },
}

#[test]
fn smoke() {
    let p = Point {
        x: -3,
        y: Some("hi".into()),
        tags: vec![1, 2],
    };
    let ours = to_vec(&p).unwrap();
    assert_eq!(ours, rmp_serde::to_vec_named(&p).unwrap());
    assert_eq!(from_slice::<Point>(&ours).unwrap(), p);
    for s in [
        Shape::Empty,
        Shape::Circle(1.5),
        Shape::Rect(1, 2),
        Shape::Poly {
            points: vec![p.clone()],
        },
    ] {
        let ours = to_vec(&s).unwrap();
        assert_eq!(ours, rmp_serde::to_vec_named(&s).unwrap());
        assert_eq!(from_slice::<Shape>(&ours).unwrap(), s);
    }
    fn local() {
        #[derive(MessageCodec, Clone)]
        struct Local;
    }
    local();
}

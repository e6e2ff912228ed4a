//! The nesting limit holds on every recursive path through derived types
//! (newtypes, `Option<Box<Self>>`, enum payloads, struct fields), so hostile
//! input cannot overflow the stack. Each test runs on a thread with a 2 MiB
//! stack (the default for spawned threads), in whatever profile the tests
//! are built in; the debug build is the one that matters.

use codecbus_core::{
    DecodeErrorKind, DecodeLimits, MessageCodec, from_slice, from_slice_with_limits,
};

const STACK: usize = 2 * 1024 * 1024;

fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

/// A newtype whose only content is an optional copy of itself: every level
/// is transparent on the wire, so one non-nil byte would recurse forever
/// without a depth count.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct N(Option<Box<N>>);

#[derive(MessageCodec, Clone, Debug, PartialEq)]
enum List {
    Nil,
    Cons(u8, Box<List>),
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
enum Expr {
    Lit(i64),
    Neg(Box<Expr>),
    Add { left: Box<Expr>, right: Box<Expr> },
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Tree {
    children: Vec<Tree>,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(as_array)]
struct Link {
    next: Option<Box<Link>>,
}

/// `{"Neg": {"Neg": ... {"Lit": 1}}}`, `depth` levels.
fn nested_neg(depth: usize) -> Vec<u8> {
    let mut w: Vec<u8> = Vec::new();
    for _ in 0..depth {
        w.extend_from_slice(b"\x81\xa3Neg");
    }
    w.extend_from_slice(b"\x81\xa3Lit\x01");
    w
}

fn nested_list(depth: usize) -> Vec<u8> {
    let mut w: Vec<u8> = Vec::new();
    for _ in 0..depth {
        w.extend_from_slice(b"\x81\xa4Cons\x92\x07");
    }
    w.extend_from_slice(b"\xa3Nil");
    w
}

#[test]
fn a_single_non_nil_byte_into_a_transparent_recursive_newtype() {
    on_small_stack(|| {
        for byte in [0x01u8, 0x00, 0x7f, 0xa0, 0xc3] {
            let e = from_slice::<N>(&[byte]).unwrap_err();
            assert_eq!(
                e.kind(),
                DecodeErrorKind::DepthLimitExceeded,
                "byte {byte:#x}"
            );
        }
        assert_eq!(from_slice::<N>(&[0xc0]).unwrap(), N(None));
    });
}

#[test]
fn deep_enum_payloads_stop_at_the_limit() {
    on_small_stack(|| {
        // Find the deepest nesting accepted with default limits: it must
        // exist, decode on this stack, and one more level must fail with
        // the depth error (not a stack overflow).
        let mut deepest = None;
        for depth in 0..DecodeLimits::DEFAULT_MAX_DEPTH as usize + 2 {
            match from_slice::<Expr>(&nested_neg(depth)) {
                Ok(_) => deepest = Some(depth),
                Err(e) => {
                    assert_eq!(e.kind(), DecodeErrorKind::DepthLimitExceeded);
                    break;
                }
            }
        }
        let deepest = deepest.expect("shallow values decode");
        eprintln!("deepest accepted Neg nesting: {deepest}");
        assert!(deepest >= 32, "only {deepest} levels decode");
        let e = from_slice::<Expr>(&nested_neg(deepest + 1)).unwrap_err();
        assert_eq!(e.kind(), DecodeErrorKind::DepthLimitExceeded);
        // Far past the limit: still an error, found quickly.
        let e = from_slice::<Expr>(&nested_neg(100_000)).unwrap_err();
        assert_eq!(e.kind(), DecodeErrorKind::DepthLimitExceeded);
    });
}

#[test]
fn deep_tuple_variants_and_structs_and_arrays() {
    on_small_stack(|| {
        assert!(from_slice::<List>(&nested_list(10)).is_ok());
        let e = from_slice::<List>(&nested_list(10_000)).unwrap_err();
        assert_eq!(e.kind(), DecodeErrorKind::DepthLimitExceeded);

        // {"children": [{"children": [ ... ]}]}
        let mut w: Vec<u8> = Vec::new();
        for _ in 0..10_000 {
            w.extend_from_slice(b"\x81\xa8children\x91");
        }
        w.extend_from_slice(b"\x81\xa8children\x90");
        let e = from_slice::<Tree>(&w).unwrap_err();
        assert_eq!(e.kind(), DecodeErrorKind::DepthLimitExceeded);

        // [[[[ ... ]]]] positionally: Tree accepts arrays too.
        let mut bytes = vec![0x91u8; 10_000];
        bytes.push(0x90);
        let e = from_slice::<Tree>(&bytes).unwrap_err();
        assert_eq!(e.kind(), DecodeErrorKind::DepthLimitExceeded);

        let mut bytes = vec![0x91u8; 10_000];
        bytes.push(0xc0);
        let e = from_slice::<Link>(&bytes).unwrap_err();
        assert_eq!(e.kind(), DecodeErrorKind::DepthLimitExceeded);
    });
}

#[test]
fn the_limit_is_configurable_and_counts_derived_levels() {
    let limits = |d| DecodeLimits::default().max_depth(d);
    let value = Expr::Neg(Box::new(Expr::Neg(Box::new(Expr::Lit(1)))));
    let bytes = codecbus_core::to_vec(&value).unwrap();
    assert_eq!(bytes, nested_neg(2));
    let needed = (1..64)
        .find(|&d| from_slice_with_limits::<Expr>(&bytes, limits(d)).is_ok())
        .unwrap();
    let e = from_slice_with_limits::<Expr>(&bytes, limits(needed - 1)).unwrap_err();
    assert_eq!(e.kind(), DecodeErrorKind::DepthLimitExceeded);
    // One more level of nesting needs more depth.
    let deeper = nested_neg(3);
    assert!(from_slice_with_limits::<Expr>(&deeper, limits(needed)).is_err());
}

#[test]
fn encoding_and_dropping_accepted_depths_fit_the_stack() {
    on_small_stack(|| {
        let mut value = Expr::Lit(0);
        for _ in 0..DecodeLimits::DEFAULT_MAX_DEPTH {
            value = Expr::Neg(Box::new(value));
        }
        let bytes = codecbus_core::to_vec(&value).unwrap();
        // Too deep to decode with default limits, but encoding it was fine.
        assert!(from_slice::<Expr>(&bytes).is_err());
        let mut add = Expr::Lit(0);
        for i in 0..40 {
            add = Expr::Add {
                left: Box::new(add),
                right: Box::new(Expr::Lit(i)),
            };
        }
        let bytes = codecbus_core::to_vec(&add).unwrap();
        assert_eq!(from_slice::<Expr>(&bytes).unwrap(), add);
    });
}

macro_rules! wide_enum {
    ($($variant:ident),*) => {
        /// Many large variants: an unoptimized decode must not reserve stack
        /// for all of them at every level.
        #[derive(MessageCodec, Clone, Debug)]
        enum Wide {
            Leaf,
            $($variant {
                a: String,
                b: String,
                c: String,
                d: Option<String>,
                e: Vec<String>,
                f: u64,
                g: (String, String),
                next: Box<Wide>,
            },)*
        }
    };
}

wide_enum!(
    V00, V01, V02, V03, V04, V05, V06, V07, V08, V09, V10, V11, V12, V13, V14, V15, V16, V17, V18,
    V19
);

#[derive(MessageCodec, Clone, Debug)]
struct WideStruct {
    a: String,
    b: String,
    c: String,
    d: Option<String>,
    e: Vec<String>,
    f: u64,
    g: (String, String),
    a1: String,
    b1: String,
    c1: String,
    d1: Option<String>,
    e1: Vec<String>,
    f1: u64,
    g1: (String, String),
    next: Option<Box<WideStruct>>,
}

#[test]
fn large_recursive_types_reach_the_limit_without_overflowing() {
    on_small_stack(|| {
        // Only `next` is given, so each value fails with a missing field
        // once the innermost level is reached: the stack went all the way.
        for depth in [1, 30, 63, 64, 200] {
            let mut w: Vec<u8> = Vec::new();
            for _ in 0..depth {
                w.extend_from_slice(b"\x81\xa3V19\x81\xa4next");
            }
            w.extend_from_slice(b"\xa4Leaf");
            let kind = from_slice::<Wide>(&w).unwrap_err().kind();
            if depth < 64 {
                assert_eq!(kind, DecodeErrorKind::MissingField("a"), "depth {depth}");
            } else {
                assert_eq!(kind, DecodeErrorKind::DepthLimitExceeded, "depth {depth}");
            }
        }
        for depth in [1, 42, 43, 200] {
            let mut w: Vec<u8> = Vec::new();
            for _ in 0..depth {
                w.extend_from_slice(b"\x81\xa4next");
            }
            w.extend_from_slice(b"\xc0");
            let kind = from_slice::<WideStruct>(&w).unwrap_err().kind();
            if depth <= 43 {
                assert_eq!(kind, DecodeErrorKind::MissingField("a"), "depth {depth}");
            } else {
                assert_eq!(kind, DecodeErrorKind::DepthLimitExceeded, "depth {depth}");
            }
        }
    });
}

#[derive(MessageCodec, Clone, Copy, Debug, PartialEq)]
#[codec(as_array)]
struct Point {
    x: f32,
    y: f32,
}

#[derive(MessageCodec, Clone, Copy, Debug, PartialEq)]
struct Line {
    from: Point,
    to: Point,
}

/// A struct whose nesting is fixed (fields of fixed nesting all the way
/// down) compares the limit once instead of counting each level, with the
/// same verdict as counting: `Vec<Line>` takes three levels, the `Vec`,
/// the `Line` and the `Point`.
#[test]
fn fixed_nesting_is_checked_as_counting_would() {
    let limits = |d| DecodeLimits::default().max_depth(d);
    let p = Point { x: 1.0, y: 2.0 };
    let lines = vec![Line { from: p, to: p }; 3];
    for bytes in [
        codecbus_core::to_vec(&lines).unwrap(),
        // The same through the general path: the points by position in a
        // longer form of the header (array 16).
        {
            let mut v = vec![0x93];
            for _ in 0..3 {
                v.extend_from_slice(b"\x82\xa4from\xdc\x00\x02\xca");
                v.extend_from_slice(&1f32.to_be_bytes());
                v.push(0xca);
                v.extend_from_slice(&2f32.to_be_bytes());
                v.extend_from_slice(b"\xa2to\x92\xca");
                v.extend_from_slice(&1f32.to_be_bytes());
                v.push(0xca);
                v.extend_from_slice(&2f32.to_be_bytes());
            }
            v
        },
    ] {
        assert_eq!(from_slice::<Vec<Line>>(&bytes).unwrap(), lines);
        assert_eq!(
            from_slice_with_limits::<Vec<Line>>(&bytes, limits(3)).unwrap(),
            lines
        );
        let e = from_slice_with_limits::<Vec<Line>>(&bytes, limits(2)).unwrap_err();
        assert_eq!(e.kind(), DecodeErrorKind::DepthLimitExceeded);
        assert_eq!(
            from_slice_with_limits::<Line>(&bytes[1..][..bytes.len() / 3], limits(1))
                .unwrap_err()
                .kind(),
            DecodeErrorKind::DepthLimitExceeded
        );
    }
    // A reader decoding many of them in a row ends where it started.
    let one = codecbus_core::to_vec(&Line { from: p, to: p }).unwrap();
    let many: Vec<u8> = one.iter().copied().cycle().take(one.len() * 200).collect();
    let mut r = codecbus_core::Reader::with_limits(&many, limits(2));
    for _ in 0..200 {
        <Line as codecbus_core::Decode>::decode(&mut r).unwrap();
    }
    assert!(r.is_empty());
}

//! Atomic memory operations, transport-neutral: the originals' op, CSWAP
//! and type names and validity rules (originals §3.4), the one table that maps
//! them onto libfabric atomics, the operand scheme that makes every
//! operation change the target where possible (§3.4.1, adapted to
//! libfabric's semantics), and a simulator that predicts the target's final
//! value after N iterations, so a run can verify what the fabric did.

mod catalog;
mod mapping;
mod operands;
mod value;

pub use catalog::{validate, AmoOp, AmoType, CswapOp, CSWAP_OPS, OPS, TYPES};
pub use mapping::{libfabric_op, FiCall, FiOp};
pub use operands::{verify, verify_value, Operands, Scheme, Verification};
pub use value::{apply, Val};

#[cfg(test)]
mod tests {
    use super::operands::{next_f32, small};
    use super::value::*;
    use super::*;

    impl Scheme {
        /// How many of the first `n` iterations change the target.
        pub fn changes(&self, n: u64) -> u64 {
            let mut t = self.initial_target;
            let mut o = self.first;
            let mut c = 0;
            for _ in 0..n {
                let t2 = apply(self.ty, self.fi_op, t, o.op1, o.op2);
                if !t2.same(t, self.ty) {
                    c += 1;
                }
                t = t2;
                o = self.next(o);
            }
            c
        }
    }

    #[test]
    fn names_and_rules() {
        assert_eq!(AmoOp::parse("cswap"), Some(AmoOp::Cswap));
        assert_eq!(AmoType::parse("double_complex"), Some(AmoType::DoubleComplex));
        assert_eq!(CswapOp::parse("Gt"), Some(CswapOp::Gt));
        assert_eq!(AmoOp::parse("PROD"), None);
        assert!(
            validate(AmoOp::Bor, CswapOp::Eq, AmoType::Float).unwrap_err()
                == "Invalid Op and Type combination: BOR FLOAT"
        );
        assert_eq!(
            validate(AmoOp::Cswap, CswapOp::Lt, AmoType::FloatComplex).unwrap_err(),
            "Invalid Op and Type combination: CSWAP LT FLOAT_COMPLEX"
        );
        assert!(validate(AmoOp::Cswap, CswapOp::Eq, AmoType::Uint128).is_ok());
        assert!(validate(AmoOp::Swap, CswapOp::Eq, AmoType::Uint128).is_err());
        assert!(validate(AmoOp::Min, CswapOp::Eq, AmoType::DoubleComplex).is_err());
        for t in TYPES.into_iter().take(8) {
            for o in OPS {
                assert!(validate(o, CswapOp::Gt, t).is_ok(), "integers allow every op");
            }
        }
        assert_eq!(
            TYPES.iter().map(|t| t.size()).collect::<Vec<_>>(),
            vec![1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 8, 16, 16]
        );
    }

    #[test]
    fn libfabric_semantics() {
        let t = AmoType::Int8;
        let v = |n: i8| small(t, n);
        assert_eq!(apply(t, FiOp::Min, v(5), v(-3), v(0)), v(-3), "signed compare");
        assert_eq!(
            apply(AmoType::Uint8, FiOp::Min, Val::Int(5), Val::Int(0xff), Val::Int(0)),
            Val::Int(5)
        );
        assert_eq!(apply(t, FiOp::Sum, v(127), v(1), v(0)), v(-128), "wraps in the type");
        assert_eq!(apply(t, FiOp::Lxor, v(1), v(1), v(0)), v(0));
        assert_eq!(apply(t, FiOp::CswapLt, v(3), v(1), v(0)), v(1), "0 < 3: swap");
        assert_eq!(apply(t, FiOp::CswapGt, v(3), v(1), v(0)), v(3), "0 > 3 fails");
        assert_eq!(
            apply(t, FiOp::Mswap, Val::Int(0b1100), Val::Int(0b0101), Val::Int(0b0011)),
            Val::Int(0b1101)
        );
    }

    #[test]
    fn every_valid_combination_changes_the_target() {
        for ty in TYPES {
            for op in OPS {
                for cs in CSWAP_OPS {
                    if validate(op, cs, ty).is_err() || (op != AmoOp::Cswap && cs != CswapOp::Eq) {
                        continue;
                    }
                    let s = Scheme::new(op, cs, ty);
                    let changed = s.changes(8);
                    // LOR and LAND saturate after one step; so do compares
                    // on types whose compare operand cannot alternate
                    assert!(
                        changed >= 1,
                        "{} {} {}: never changes the target",
                        op.name(),
                        cs.name(),
                        ty.name()
                    );
                    let always = matches!(
                        op,
                        AmoOp::Min | AmoOp::Max | AmoOp::Sum | AmoOp::Lxor | AmoOp::Bxor | AmoOp::Swap | AmoOp::Axor
                    ) || (op == AmoOp::Cswap && ty.int_bits().is_some() && ty != AmoType::Uint128);
                    if always {
                        assert_eq!(changed, 8, "{} {} {}", op.name(), cs.name(), ty.name());
                    }
                }
            }
        }
    }

    #[test]
    fn predictions_and_a_check_that_can_fail() {
        let s = Scheme::new(AmoOp::Sum, CswapOp::Eq, AmoType::Uint64);
        assert_eq!(s.expected(10000), Val::Int(10000), "a SUM of ones counts exactly");
        let s = Scheme::new(AmoOp::Sum, CswapOp::Eq, AmoType::DoubleComplex);
        assert_eq!(s.expected(3), Val::C64(3.0, 3.0));
        let s = Scheme::new(AmoOp::Min, CswapOp::Eq, AmoType::Float);
        assert_eq!(s.expected(2), Val::F32(next_f32(next_f32(f32::MAX, true), true)));
        // memory holding 5 slots after 7 iterations
        let s = Scheme::new(AmoOp::Sum, CswapOp::Eq, AmoType::Int32);
        let mut mem = vec![0u8; 5 * 64];
        for i in 0..5 {
            s.expected(7).encode(AmoType::Int32, &mut mem[i * 64..]);
        }
        assert!(verify(&s, "server", &mem, 5, 64, 7).ok);
        // the wrong expectation (8 iterations) must fail, naming both values
        let v = verify(&s, "server", &mem, 5, 64, 8);
        assert!(!v.ok);
        assert_eq!(
            (v.expected.as_str(), v.actual.as_str(), v.wrong_slots),
            ("0x8", "0x7", 5)
        );
        let s = Scheme::new(AmoOp::Cswap, CswapOp::Eq, AmoType::Uint128);
        assert_eq!(s.expected(1), Val::Int(1));
        let mut b = [0u8; 16];
        Val::Int(u128::MAX - 1).encode(AmoType::Uint128, &mut b);
        assert_eq!(Val::decode(AmoType::Uint128, &b), Val::Int(u128::MAX - 1));
    }
}

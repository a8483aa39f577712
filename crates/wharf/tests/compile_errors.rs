//! Misuses of the attribute macros fail to compile with a message that says what to do; the
//! expected messages are the committed `.stderr` files beside each case in `tests/ui/`.

#[test]
fn misuses_of_the_macros_explain_themselves() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}

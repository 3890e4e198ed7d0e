//! Numbers as people read them: `57,000`, not `57000`. The trace's folded
//! turns and the benchmarks' tables both print counts that large.

/// `digits` (`"57000"`) with its thousands separated: `"57,000"`.
pub fn grouped(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// `57000` as `57,000`.
pub fn thousands(n: u64) -> String {
    grouped(&n.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped_from_the_right() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(57_000), "57,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}

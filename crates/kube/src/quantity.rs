//! Resource amounts in Kubernetes' quantity notation (`8Gi`, `512Mi`, `2`, `500m`, `1e9`),
//! parsed exactly so that a limit the API server would refuse, or read differently from
//! what the user meant, is refused here with the value that caused it.
//!
//! The grammar is apimachinery's `resource.Quantity`: an optional sign, a decimal number,
//! then one binary suffix (`Ki`..`Ei`), one decimal suffix (`n u m k M G T P E`) or a
//! decimal exponent (`e3`, `E-2`). `8GB` or `8gi` are not quantities; `8G` is 8·10⁹.

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use crate::error::{KubeError, Result};

/// More digits than this cannot describe a resource of any real machine; refusing them
/// keeps every computation below exact in `u128`.
const MAX_DIGITS: usize = 24;
/// The same for an explicit exponent.
const MAX_EXPONENT: i32 = 24;

/// A parsed, positive quantity: `mantissa · 2^binary_shift · 10^decimal_exp`, plus the
/// text it was written as (what the manifest carries).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Amount {
    text: String,
    mantissa: u128,
    binary_shift: u32,
    decimal_exp: i32,
}

impl Amount {
    /// Parse `text` for the limit `what` (named in the error).
    pub fn parse(what: &'static str, text: &str) -> Result<Amount> {
        let bad = |reason: &'static str| KubeError::InvalidQuantity {
            what,
            value: text.to_string(),
            reason,
        };
        let body = text.strip_prefix('+').unwrap_or(text);
        if body.starts_with('-') {
            return Err(bad("must be positive"));
        }
        let number_end = body
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(body.len());
        let (number, suffix) = body.split_at(number_end);
        let (int_part, frac_part) = match number.split_once('.') {
            Some((i, f)) => (i, f),
            None => (number, ""),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(bad("expected a number such as 8Gi, 512Mi, 2 or 500m"));
        }
        if frac_part.contains('.') {
            return Err(bad("more than one decimal point"));
        }
        let digits = format!("{int_part}{frac_part}");
        let digits = digits.trim_start_matches('0');
        if digits.len() > MAX_DIGITS {
            return Err(bad("too many digits"));
        }
        let mantissa: u128 = if digits.is_empty() {
            0
        } else {
            digits.parse().map_err(|_| bad("not a decimal number"))?
        };
        let frac_digits = i32::try_from(frac_part.len()).map_err(|_| bad("too many digits"))?;
        let (binary_shift, decimal_exp) = match suffix {
            "" => (0, 0),
            "Ki" => (10, 0),
            "Mi" => (20, 0),
            "Gi" => (30, 0),
            "Ti" => (40, 0),
            "Pi" => (50, 0),
            "Ei" => (60, 0),
            "n" => (0, -9),
            "u" => (0, -6),
            "m" => (0, -3),
            "k" => (0, 3),
            "M" => (0, 6),
            "G" => (0, 9),
            "T" => (0, 12),
            "P" => (0, 15),
            "E" => (0, 18),
            s if s.starts_with(['e', 'E']) => (
                0,
                parse_exponent(&s[1..]).ok_or_else(|| {
                    bad("the exponent after e/E must be a whole number of at most two digits")
                })?,
            ),
            _ => {
                return Err(bad(
                    "unknown suffix: use Ki Mi Gi Ti Pi Ei (powers of 1024), \
                     n u m k M G T P E (powers of 1000) or an exponent like e9",
                ))
            }
        };
        if mantissa == 0 {
            return Err(bad("must be positive"));
        }
        Ok(Amount {
            text: text.to_string(),
            mantissa,
            binary_shift,
            decimal_exp: decimal_exp - frac_digits,
        })
    }

    /// An exact number of bytes, written with the largest binary suffix that divides it.
    pub fn from_bytes(bytes: u64) -> Option<Amount> {
        if bytes == 0 {
            return None;
        }
        let (shift, suffix) = [
            (60, "Ei"),
            (50, "Pi"),
            (40, "Ti"),
            (30, "Gi"),
            (20, "Mi"),
            (10, "Ki"),
        ]
        .into_iter()
        .find(|(shift, _)| bytes.trailing_zeros() >= *shift)
        .unwrap_or((0, ""));
        Some(Amount {
            text: format!("{}{suffix}", bytes >> shift),
            mantissa: u128::from(bytes >> shift),
            binary_shift: shift,
            decimal_exp: 0,
        })
    }

    /// `n` GiB (a default size); `n` must not be 0.
    pub(crate) fn gibibytes(n: u16) -> Amount {
        Amount {
            text: format!("{n}Gi"),
            mantissa: u128::from(n),
            binary_shift: 30,
            decimal_exp: 0,
        }
    }

    /// The text, as the manifest carries it.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The value times `10^scale`, when that is a whole number that fits `u128`.
    fn scaled(&self, scale: i32) -> Option<u128> {
        let value = self
            .mantissa
            .checked_mul(1u128.checked_shl(self.binary_shift)?)?;
        let exp = self.decimal_exp + scale;
        if exp >= 0 {
            value.checked_mul(10u128.checked_pow(u32::try_from(exp).ok()?)?)
        } else {
            let div = 10u128.checked_pow(exp.unsigned_abs())?;
            (value % div == 0).then(|| value / div)
        }
    }

    /// The value as a whole number of bytes: refuses fractions (`100m` bytes) and values
    /// beyond `u64`, since the same number becomes an `RLIMIT_DATA` ceiling.
    pub fn bytes(&self, what: &'static str) -> Result<u64> {
        self.scaled(0)
            .and_then(|v| u64::try_from(v).ok())
            .ok_or_else(|| KubeError::InvalidQuantity {
                what,
                value: self.text.clone(),
                reason: "must be a whole number of bytes that fits 64 bits",
            })
    }

    /// Refuse CPU amounts finer than the millicore the kubelet rounds to.
    pub fn check_millis(&self, what: &'static str) -> Result<()> {
        match self.scaled(3) {
            Some(_) => Ok(()),
            None => Err(KubeError::InvalidQuantity {
                what,
                value: self.text.clone(),
                reason: "must be a whole number of millicores (at least 1m)",
            }),
        }
    }

    /// The typed `Quantity`.
    pub fn quantity(&self) -> Quantity {
        Quantity(self.text.clone())
    }
}

fn parse_exponent(s: &str) -> Option<i32> {
    let (negative, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let value: i32 = digits.parse().ok()?;
    if value > MAX_EXPONENT {
        return None;
    }
    Some(if negative { -value } else { value })
}

#[cfg(test)]
#[path = "quantity_tests.rs"]
mod tests;

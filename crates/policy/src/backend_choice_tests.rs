use super::*;

#[test]
fn every_name_parses_back_to_its_choice_and_nothing_else_parses() {
    for name in BackendChoice::NAMES {
        let choice: BackendChoice = name.parse().unwrap();
        assert_eq!(choice.name(), name);
    }
    assert!("Landlock".parse::<BackendChoice>().is_err());
    assert!("seatbelt".parse::<BackendChoice>().is_err());
}

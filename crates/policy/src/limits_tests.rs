use super::*;

#[test]
fn a_contract_has_both_limits_by_default_and_a_run_none() {
    let contract = ContractLimits::default();
    assert_eq!(contract.max_processes, 512);
    assert_eq!(contract.max_memory_bytes, 8 << 30);
    assert_eq!(
        ResourceLimits::default(),
        ResourceLimits {
            max_processes: None,
            max_data_bytes: None
        }
    );
}

#[test]
fn a_contract_spawn_hands_both_limits_to_its_run() {
    let run = ResourceLimits::from(ContractLimits {
        max_processes: 7,
        max_memory_bytes: 1 << 20,
    });
    assert_eq!(run.max_processes, Some(7));
    assert_eq!(run.max_data_bytes, Some(1 << 20));
}

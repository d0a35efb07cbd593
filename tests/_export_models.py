"""Small fits shared by the export tests (tests/test_export_onnx.py, test_export_table.py)."""

#: A PiLiD or PiLiB that trains in a moment: enough to export, not to be accurate.
SMALL = dict(epochs=3, batch_size=64, random_state=0, device="cpu")
#: PiLiB's blocks, small.
BLOCKS = dict(n_blocks=3, block_layers=(4,), warmup_epochs=1, phase1_epochs=3, mask_patience=1)

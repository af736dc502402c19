"""kernels.checks: the input checks every launch routine runs before anything reaches the GPU."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

import kernels
from kernels import checks


def f32(*shape):
    return np.ones(shape, np.float32)


def test_valid_operands_give_m_n_k():
    assert checks.check_matmul_operands(f32(3, 5), f32(5, 7)) == (3, 7, 5)


@pytest.mark.parametrize(
    "a, b, error, words",
    [
        (np.ones((3, 5)), f32(5, 7), TypeError, "a must have dtype float32, got float64"),
        (f32(3, 5), np.ones((5, 7), np.float16), TypeError, "b must have dtype float32"),
        (f32(3, 5, 1), f32(5, 7), ValueError, "a must have 2 dimension"),
        (f32(5), f32(5, 7), ValueError, "a must have 2 dimension"),
        (f32(3, 5), f32(4, 7), ValueError, "inner dimensions differ: a is 3x5, b is 4x7"),
        (f32(3, 5), f32(7, 5).T, ValueError, "b must be C-contiguous"),
        (f32(0, 5), f32(5, 7), ValueError, "a has a zero-size dimension"),
        (f32(3, 0), f32(0, 7), ValueError, "zero-size"),
        ([[1.0]], f32(1, 1), TypeError, "a must be an array, got list"),
    ],
)
def test_bad_matmul_operands_are_named(a, b, error, words):
    with pytest.raises(error, match=words.replace("(", r"\(")):
        checks.check_matmul_operands(a, b)


def test_operands_of_the_wrong_array_library_are_refused():
    with pytest.raises(TypeError, match="a must be a numpy array, got list"):
        checks.check_matmul_operands([[1.0]], f32(1, 1), np.ndarray)


def test_products_too_large_for_32_bit_indexing_are_refused():
    a = np.ones((50_000, 1), np.float32)
    b = np.ones((1, 50_000), np.float32)
    with pytest.raises(ValueError, match="2500000000 elements"):
        checks.check_matmul_operands(a, b)


class ShapeOnly:
    """What the checks read of a float32 C-contiguous array, without its memory (2**31 floats are 8 GiB)."""

    def __init__(self, *shape):
        self.shape, self.ndim, self.size = shape, len(shape), math.prod(shape)
        self.dtype, self.nbytes = np.dtype(np.float32), 4 * math.prod(shape)
        self.flags = SimpleNamespace(c_contiguous=True)


def test_an_operand_of_2_31_elements_is_refused_and_one_less_is_accepted():
    with pytest.raises(ValueError, match="2147483648 elements; the kernels index with 32-bit ints"):
        checks.check_matmul_operands(ShapeOnly(2**16, 2**15), ShapeOnly(2**15, 1))
    with pytest.raises(ValueError, match="b has 2147483648 elements"):
        checks.check_matmul_operands(ShapeOnly(1, 2), ShapeOnly(2, 2**30))
    assert checks.check_matmul_operands(ShapeOnly(2**31 - 1, 1), ShapeOnly(1, 1)) == (2**31 - 1, 1, 1)


def test_a_product_of_2_31_elements_is_refused_and_one_less_is_accepted():
    with pytest.raises(ValueError, match="the product would have 2147483648 elements"):
        checks.check_matmul_operands(ShapeOnly(2**16, 1), ShapeOnly(1, 2**15))
    assert checks.check_matmul_operands(ShapeOnly(2**31 - 1, 1), ShapeOnly(1, 1))[:2] == (2**31 - 1, 1)


def test_elementwise_operands_of_2_31_elements_are_refused():
    with pytest.raises(ValueError, match="2147483648 elements"):
        checks.check_same_shape(ShapeOnly(2**31), ShapeOnly(2**31), 1)


def test_output_of_the_wrong_shape_is_refused():
    with pytest.raises(ValueError, match=r"out has shape \(3, 4\), the result has \(3, 5\)"):
        checks.check_output(f32(3, 4), (3, 5))


def test_memory_check_names_the_sizes():
    with pytest.raises(MemoryError, match="needs 2.00 GiB of device memory; only 1.00 GiB are free"):
        checks.check_fits(2 << 30, 1 << 30, "matmul")
    checks.check_fits(1 << 30, 1 << 30, "matmul")  # exactly fits


@pytest.mark.parametrize("chunks, error", [(0, ValueError), (11, ValueError), (2.0, TypeError), (True, TypeError)])
def test_bad_chunk_counts_are_refused(chunks, error):
    with pytest.raises(error, match="chunks"):
        checks.check_chunks(chunks, 10)


@pytest.mark.parametrize("chunks", [1, 9, 10])
def test_chunk_counts_from_one_to_the_vector_length_are_accepted(chunks):
    checks.check_chunks(chunks, 10)


def test_host_routine_rejects_bad_input_before_touching_the_gpu():
    # On a machine without a GPU any CUDA call would raise CUDARuntimeError;
    # getting the input errors instead shows the checks come first.
    with pytest.raises(TypeError, match="float32"):
        kernels.matmul_host("naive", np.ones((4, 4)), f32(4, 4))
    with pytest.raises(ValueError, match="inner dimensions differ"):
        kernels.matmul_host("tiled32", f32(4, 3), f32(4, 4))
    with pytest.raises(ValueError, match="unknown matmul kernel 'nope'"):
        kernels.matmul_host("nope", f32(4, 4), f32(4, 4))
    with pytest.raises(ValueError, match="a and b differ in shape"):
        kernels.add_host("matrix_add_2d", f32(4, 4), f32(4, 5))
    with pytest.raises(ValueError, match="unknown elementwise kernel"):
        kernels.add_host("matrix_sub", f32(4, 4), f32(4, 4))


def test_host_routine_refuses_more_than_the_free_device_memory(monkeypatch):
    monkeypatch.setattr(kernels.host, "free_device_bytes", lambda: 1000)
    with pytest.raises(MemoryError, match="matmul_host"):
        kernels.matmul_host("naive", f32(16, 16), f32(16, 16))

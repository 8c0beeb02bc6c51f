"""set_variant / variant / variants and the exception hierarchy."""

import pytest

import heliograph as hg


def test_cpu_variant_and_mitsuba_aliases():
    assert hg.variants()[:2] == ["cpu_rgb", "cuda_rgb"]
    assert {"scalar_rgb", "llvm_ad_rgb", "cuda_ad_rgb"} <= set(hg.variants())
    for name in ["cpu_rgb", "scalar_rgb", "llvm_ad_rgb"]:
        hg.set_variant(name)
        assert hg.variant() == name  # the name that was set, as Mitsuba


@pytest.mark.parametrize("name", ["cuda_rgb", "cuda_ad_rgb"])
def test_cuda_variants_say_cuda_is_unavailable(name):
    hg.set_variant("scalar_rgb")
    with pytest.raises(hg.CudaUnavailableError, match=r"^CUDA unavailable: variant \"cuda.*needs the CUDA backend: .*; use \"cpu_rgb\"$") as e:
        hg.set_variant(name)
    assert isinstance(e.value, RuntimeError)
    assert hg.variant() == "scalar_rgb"  # unchanged


def test_first_usable_variant_wins():
    hg.set_variant("cuda_ad_rgb", "llvm_ad_rgb")
    assert hg.variant() == "llvm_ad_rgb"


def test_unknown_variant_is_a_value_error_listing_the_choices():
    with pytest.raises(hg.VariantError, match=r'unknown variant "gpu_spectral".*available: cpu_rgb') as e:
        hg.set_variant("gpu_spectral")
    assert isinstance(e.value, ValueError)
    with pytest.raises(hg.VariantError, match="at least one"):
        hg.set_variant()
    with pytest.raises(TypeError):
        hg.set_variant(3)


def test_exception_classes_derive_from_builtins():
    assert issubclass(hg.SceneError, ValueError)
    assert issubclass(hg.VariantError, ValueError)
    assert issubclass(hg.RenderError, RuntimeError)
    assert issubclass(hg.CudaUnavailableError, RuntimeError)
    assert issubclass(hg.SceneFileError, OSError)
    assert hg.SceneError.__module__ == "heliograph"


def test_version_and_private_native_module():
    import heliograph._native as native

    assert hg.__version__ == native.__version__
    assert hg.TensorXf is native.TensorXf

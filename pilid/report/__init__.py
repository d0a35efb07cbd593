"""pilid.report"""

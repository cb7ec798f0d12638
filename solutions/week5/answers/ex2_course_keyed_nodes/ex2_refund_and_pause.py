from course.cloudwave import refund_keyed, subscription_keyed

refund = refund_keyed
pause = subscription_keyed("pause")
